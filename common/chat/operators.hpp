// Jinja's arithmetic, comparison, membership and concatenation operators on
// Values, with 64-bit integer overflow and division by zero refused.
#pragma once

#include <string>

#include "context.hpp"

namespace llama::chat {

// "-" or "+" applied to a number (booleans count as 0 and 1).
Value unary_minus_plus(const std::string& op, const Value& v);

// Every binary operator except the short-circuit "and" / "or": + - * / // % **
// ~ == != < > <= >= in "not in". Throws llama::Error naming the operator and
// the operand kinds it does not apply to.
Value binary_operator(RenderContext& ctx, const std::string& op, const Value& a, const Value& b);

}  // namespace llama::chat

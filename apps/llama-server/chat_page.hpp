// The chat page at GET /: chat_page/index.html, embedded in the binary at build time
// (chat_page/embed.cmake writes chat_page_data.cpp), so no request reads a file.
#pragma once

#include <string_view>

#include <httplib.h>

namespace llama::server {

// The page's bytes (UTF-8 HTML with its one inline style and script).
std::string_view chat_page_html();
// Its Content-Security-Policy: only those two inline elements (by SHA-256) and
// requests to the page's own origin.
std::string_view chat_page_csp();

// 200 with the page, its CSP and headers that keep it from being framed or sniffed.
void serve_chat_page(httplib::Response& res);

}  // namespace llama::server

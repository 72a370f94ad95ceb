// The chat page's response (chat_page.hpp); the bytes are in the generated
// chat_page_data.cpp.
#include "chat_page.hpp"

#include <string>

namespace llama::server {

void serve_chat_page(httplib::Response& res) {
  res.status = 200;
  res.set_header("Content-Security-Policy", std::string(chat_page_csp()));
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  // The page changes with the binary: a browser asks again rather than keep an old one.
  res.set_header("Cache-Control", "no-cache");
  const std::string_view html = chat_page_html();
  res.set_content(html.data(), html.size(), "text/html; charset=utf-8");
}

}  // namespace llama::server

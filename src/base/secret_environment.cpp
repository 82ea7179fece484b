#include "kwheel/base/secret_environment.hpp"

#include <algorithm>
#include <stdexcept>

#include "kwheel/base/environment.hpp"
#include "kwheel/base/secret.hpp"
#include "kwheel/base/url_userinfo.hpp"

namespace kwheel {

namespace {

// `pattern` with at most one '*' (any text, possibly none).
bool matches(std::string_view pattern, std::string_view name) {
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return pattern == name;
  const std::string_view head = pattern.substr(0, star), tail = pattern.substr(star + 1);
  return name.size() >= head.size() + tail.size() && name.starts_with(head) && name.ends_with(tail);
}

void register_value(SecretForm form, const std::string& value) {
  if (form == SecretForm::value) register_secret(Secret(value));
  if (form != SecretForm::url) return;
  // The whole value, and each word of a list ("name=URL" as uv's UV_INDEX
  // writes an entry: the URL after the '=').
  register_userinfo_password(value);
  size_t start = 0;
  while (start < value.size()) {
    const size_t end = std::min(value.find_first_of(" \t\n,", start), value.size());
    std::string_view word = std::string_view(value).substr(start, end - start);
    register_userinfo_password(word);
    if (const size_t eq = word.find('='); eq != std::string_view::npos && word.substr(0, eq).find_first_of(":/") == std::string_view::npos)
      register_userinfo_password(word.substr(eq + 1));
    start = end + 1;
  }
}

}  // namespace

const SecretVariable* secret_variable(std::string_view name) {
  for (const SecretVariable& v : kSecretVariables)
    if (matches(v.name, name)) return &v;
  return nullptr;
}

std::optional<std::string> secret_env_value(std::string_view name) {
  const SecretVariable* v = secret_variable(name);
  if (!v)
    throw std::logic_error("kwheel reads a secret from $" + std::string(name) + ", which is not in kSecretVariables (base/secret_environment.hpp)");
  auto value = env_value(std::string(name).c_str());
  if (value) register_value(v->form, *value);
  return value;
}

}  // namespace kwheel

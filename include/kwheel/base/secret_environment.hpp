#pragma once
// The environment variables a secret comes in: the ones kwheel reads a
// credential from, and the ones pip and uv take an index's login from
// (kwheel never reads those of its caller; the children that need a login
// get the one kwheel chose, through hub/child_tool_access).
//
// One list for both ends. kwheel reads a listed variable only through
// secret_env_value, which registers the secret for redaction; a name that
// is not listed cannot be read that way, so a new secret variable cannot
// be read without joining the list. And every child process loses every
// listed variable (base/process), whatever it is: the kernel code
// `validate` runs comes from the Hub, and neither it nor the interpreter
// probe, pip, uv or keyring needs the caller's Hub token or passwords.
#include <optional>
#include <string>
#include <string_view>

namespace kwheel {

enum class SecretForm {
  value,     // the variable is the secret: a token, a password
  url,       // URLs (one or more, space- or comma-separated) whose user:password@ is
  identity,  // a user name: half a login, stripped from children but not
             // redacted (messages say whose credentials were refused)
};

struct SecretVariable {
  std::string_view name;     // '*' stands for any text: uv's UV_INDEX_<NAME>_PASSWORD
  SecretForm form;
  std::string_view read_by;  // where kwheel reads it; "" for pip's and uv's own
};

inline constexpr SecretVariable kSecretVariables[] = {
    {"HF_TOKEN", SecretForm::value, "hub/hf_config: the Hub token"},
    {"HUGGING_FACE_HUB_TOKEN", SecretForm::value, "hub/hf_config: the Hub token, huggingface_hub's older name, when HF_TOKEN is unset"},
    {"HF_ENDPOINT", SecretForm::url, "hub/hf_config: the Hub endpoint; its user:password@ is sent as HTTP Basic"},
    {"TWINE_PASSWORD", SecretForm::value, "cli/publish_command: the upload password or API token"},
    {"TWINE_USERNAME", SecretForm::identity, "cli/publish_command: the upload user"},
    {"TWINE_REPOSITORY_URL", SecretForm::url, "cli/publish_command: the upload URL, which may carry user:password@"},
    {"PIP_INDEX_URL", SecretForm::url, ""},
    {"PIP_EXTRA_INDEX_URL", SecretForm::url, ""},
    {"PIP_FIND_LINKS", SecretForm::url, ""},
    {"UV_DEFAULT_INDEX", SecretForm::url, ""},
    {"UV_INDEX", SecretForm::url, ""},
    {"UV_INDEX_URL", SecretForm::url, ""},
    {"UV_EXTRA_INDEX_URL", SecretForm::url, ""},
    {"UV_FIND_LINKS", SecretForm::url, ""},
    {"UV_INDEX_*_PASSWORD", SecretForm::value, ""},
    {"UV_INDEX_*_USERNAME", SecretForm::identity, ""},
    {"UV_PUBLISH_PASSWORD", SecretForm::value, ""},
    {"UV_PUBLISH_TOKEN", SecretForm::value, ""},
};

// The entry `name` falls under, or nullptr.
const SecretVariable* secret_variable(std::string_view name);
inline bool is_secret_variable(std::string_view name) { return secret_variable(name) != nullptr; }

// The value of a listed variable (nullopt when unset or empty, as
// env_value), registered for redaction as its form says. A name that is not
// listed is a bug in kwheel: std::logic_error.
std::optional<std::string> secret_env_value(std::string_view name);

}  // namespace kwheel

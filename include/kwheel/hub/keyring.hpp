#pragma once
// Credentials from the `keyring` program, asked as pip 26's
// `--keyring-provider subprocess` asks it (pip/_internal/network/auth.py,
// KeyRingCliProvider): `keyring --mode=creds --output=json get SERVICE
// [USERNAME]` with stdin closed and PYTHONIOENCODING=utf-8, its stdout one
// JSON object {"username", "password"}, a non-zero exit "none". kwheel is
// not Python, so it has no `import` provider: `auto` is the subprocess
// provider when a `keyring` executable is on PATH, as pip's auto falls back
// to when keyring is not importable.
#include <filesystem>
#include <optional>
#include <string>

#include "kwheel/base/secret.hpp"

namespace kwheel {

enum class KeyringProvider { automatic, subprocess, disabled };

// pip's values: "auto", "subprocess", "disabled" ("import" is refused:
// kwheel cannot import Python's keyring). `named` says where the value came
// from, for the usage error.
KeyringProvider parse_keyring_provider(const std::string& value, const std::string& named);

// The program the provider runs: `keyring` found on PATH; nullopt when
// disabled or when there is none (pip then asks no keyring either).
std::optional<std::filesystem::path> keyring_program(KeyringProvider provider);

struct KeyringCredentials {
  std::string username;
  Secret password;
};

// One `get`: `service` is an index URL or a "host:port" netloc, as pip
// names them. nullopt when keyring has none (it exits non-zero). A keyring
// older than 25.2.1 (no --mode=creds) or one that prints no credentials
// object is an Error(input) naming the program and the fix; its output is
// never quoted (it may hold the password).
std::optional<KeyringCredentials> keyring_get(const std::filesystem::path& program, const std::string& service,
                                              const std::optional<std::string>& username);

}  // namespace kwheel

#include "kwheel/base/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "kwheel/base/error.hpp"
#include "kwheel/base/interrupt.hpp"
#include "kwheel/base/secret_environment.hpp"

extern char** environ;

// posix_spawn_file_actions_addchdir_np: glibc 2.29 and later.
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
#define KWHEEL_HAVE_ADDCHDIR 1
#else
#define KWHEEL_HAVE_ADDCHDIR 0
#endif

namespace kwheel {

namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) throw Error(ErrorKind::io, std::string("pipe: ") + std::strerror(errno));
  }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

void append_bounded(std::string& s, const char* p, size_t n, size_t max) {
  s.append(p, n);
  if (s.size() > max) s.erase(0, s.size() - max);
}

constexpr int kChildDefaultSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

#if !KWHEEL_HAVE_ADDCHDIR
// posix_spawn_file_actions_addchdir_np is glibc 2.29's; the release build
// targets 2.28 (docs/architecture.md, "kwheel as a wheel"), where a child
// with a working directory is forked and exec'd by hand, doing what
// spawn_child's attributes do. Between fork and exec only async-signal-safe
// calls; an exec that fails reports its errno through a close-on-exec pipe,
// so the caller's error is posix_spawnp's.
int fork_exec_in(std::vector<char*>& args, std::vector<char*>& envp, Pipe& out, Pipe& err, const std::string& cwd,
                 pid_t& pid) {
  Pipe report;
  pid = ::fork();
  if (pid < 0) return errno;
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0 || ::dup2(devnull, 0) < 0 || ::dup2(out.fd[1], 1) < 0 || ::dup2(err.fd[1], 2) < 0 ||
        ::chdir(cwd.c_str()) != 0 || ::setpgid(0, 0) != 0) {
      int e = errno;
      (void)!::write(report.fd[1], &e, sizeof e);
      ::_exit(127);
    }
    for (int sig : kChildDefaultSignals) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvpe(args[0], args.data(), envp.data());
    int e = errno;
    (void)!::write(report.fd[1], &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before the caller may signal it
  report.close_end(1);
  int e = 0;
  ssize_t got;
  while ((got = ::read(report.fd[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  if (got == static_cast<ssize_t>(sizeof e)) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return e;
  }
  return 0;
}
#endif

// A child runs with stdin /dev/null, stdout and stderr into the pipes, in its
// own process group (so a timeout kills grandchildren too), and with SIGINT,
// SIGTERM, SIGHUP and SIGPIPE unblocked and at their defaults: kwheel blocks
// them for its cleanup thread (interrupt.hpp), a child expects them as any
// program does. Returns 0 or the errno that kept it from running.
int spawn_child(std::vector<char*>& args, std::vector<char*>& envp, Pipe& out, Pipe& err,
                const std::optional<std::string>& cwd, pid_t& pid) {
#if !KWHEEL_HAVE_ADDCHDIR
  if (cwd) return fork_exec_in(args, envp, out, err, *cwd, pid);
#endif
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err.fd[1], 2);
#if KWHEEL_HAVE_ADDCHDIR
  if (cwd) posix_spawn_file_actions_addchdir_np(&fa, cwd->c_str());
#endif
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigemptyset(&defaults);
  for (int sig : kChildDefaultSignals) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  int rc = ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return rc;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& o) {
  if (argv.empty()) throw Error(ErrorKind::usage, "no program to run");
  std::vector<std::string> env_store;
  std::set<std::string> drop(o.unset_env.begin(), o.unset_env.end());
  for (const auto& [k, _] : o.set_env) drop.insert(k);
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    const std::string key = kv.substr(0, kv.find('='));
    if (!drop.count(key) && !is_secret_variable(key)) env_store.push_back(kv);
  }
  for (const auto& [k, v] : o.set_env) env_store.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_store = argv;
  for (auto& s : argv_store) args.push_back(s.data());
  args.push_back(nullptr);

  Pipe out, err;
  pid_t pid = -1;
  int rc = spawn_child(args, envp, out, err, o.cwd, pid);
  if (rc != 0) throw Error(ErrorKind::io, "cannot run '" + argv[0] + "': " + std::strerror(rc));
  // Interrupting kwheel kills the group: Ctrl-C reaches only the terminal's
  // foreground group, which the child has left.
  KillOnInterrupt kill_on_interrupt(pid);
  out.close_end(1);
  err.close_end(1);

  ProcessResult r;
  const auto deadline = std::chrono::steady_clock::now() + o.timeout;
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) append_bounded(i == 0 ? r.out : r.err, buf, static_cast<size_t>(got), o.max_output);
      else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!r.timed_out && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  else if (!r.timed_out && WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  return r;
}

ProcessOptions isolated_python(std::chrono::seconds timeout, std::optional<std::string> cwd) {
  ProcessOptions o;
  o.cwd = std::move(cwd);
  o.set_env = {{"PYTHONNOUSERSITE", "1"}, {"PYTHONDONTWRITEBYTECODE", "1"}, {"PIP_DISABLE_PIP_VERSION_CHECK", "1"}};
  o.unset_env = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_REQUIRE_VIRTUALENV"};
  o.timeout = timeout;
  return o;
}

}  // namespace kwheel

// The executor's start: flags, the channel, the backend, the hello; then ExecutorServer.
#include "daemon/executor/gpu_executor.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <string_view>

#include <spdlog/spdlog.h>

#include "client/api/unique_fd.h"
#include "daemon/executor/executor_channel.h"
#include "daemon/executor/executor_control.h"
#include "daemon/executor/executor_messages.h"
#include "daemon/executor/executor_server.h"

namespace accord::executor {
namespace {

Result<int> parse_int(std::string_view flag, std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0)
    return invalid_error("executor: " + std::string(flag) + " '" + std::string(text) + "' is not a non-negative integer");
  return value;
}

HelloInfo describe(const devices::Device& device) {
  HelloInfo hello;
  hello.pid = static_cast<std::int32_t>(::getpid());
  hello.has_device = true;
  hello.info = device.info();
  hello.lanes.assign(device.lanes().begin(), device.lanes().end());
  const int n = hello.info.ordinal;
  for (MemoryPlacement p : {MemoryPlacement::host_visible(), MemoryPlacement::gpu_local(n),
                            MemoryPlacement::npu_local(n), MemoryPlacement::shared(n)})
    if (device.supports(p)) hello.placements.push_back(p);
  hello.waits_natively = device.waits_natively();
  hello.launches_synchronously = device.launches_synchronously();
  if (const int words = device.completion_word_fd(); words >= 0) {
    struct stat file {};
    if (::fstat(words, &file) == 0 && file.st_size > 0) hello.completion_word_bytes = static_cast<std::uint64_t>(file.st_size);
  }
  return hello;
}

}  // namespace

Result<std::optional<ExecutorArgs>> parse_executor_args(int argc, const char* const* argv) {
  bool executor = false;
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--gpu-executor") executor = true;
  if (!executor) return std::optional<ExecutorArgs>();
  ExecutorArgs args;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) return invalid_error("executor: flag " + std::string(flag) + " needs a value");
    const std::string_view value = argv[++i];
    if (flag == "--gpu-executor") {
      ACCORD_ASSIGN_OR_RETURN(args.ordinal, parse_int(flag, value));
    } else if (flag == "--executor-fd") {
      ACCORD_ASSIGN_OR_RETURN(args.fd, parse_int(flag, value));
    } else if (flag == "--executor-backend") {
      args.backend = std::string(value);
    } else if (flag == "--device-option") {
      const std::size_t eq = value.find('=');
      if (eq == std::string_view::npos || eq == 0)
        return invalid_error("executor: --device-option '" + std::string(value) + "' is not BACKEND.KEY=VALUE");
      args.options[std::string(value.substr(0, eq))] = std::string(value.substr(eq + 1));
    } else {
      return invalid_error("executor: unknown flag '" + std::string(flag) + "'");
    }
  }
  if (args.fd < 0) return invalid_error("executor: --executor-fd is required with --gpu-executor");
  return std::optional<ExecutorArgs>(std::move(args));
}

int run_gpu_executor(const devices::BackendCatalog& catalog, ExecutorArgs args) {
  // Never outlive accordd. (If it died before this line, its end of the socket is closed
  // and the first receive below sees the hang-up; getppid() == 1 would not tell, since
  // accordd may itself be pid 1 in a container.)
  static_cast<void>(::prctl(PR_SET_PDEATHSIG, SIGKILL));
  // `systemctl stop` (every process of the unit) and Ctrl-C (the terminal's process
  // group) signal the executors too; accordd then drains its work on them, so they must
  // outlive the signal. They end when accordd hangs up or asks them to.
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) static_cast<void>(::signal(signal, SIG_IGN));
  const std::string label = "gpu:" + std::to_string(args.ordinal) + " executor (pid " + std::to_string(::getpid()) + ")";
  UniqueFd socket(args.fd);

  auto init = receive_control(socket.get());
  if (!init.ok() || !init->has_value() || (*init)->op != ControlOp::Init || !(*init)->fd) {
    spdlog::error("{}: no channel from accordd: {}", label, init.ok() ? "bad first message" : init.status().message());
    return kExecutorExitBadArgs;
  }
  auto channel = ExecutorChannel::map(std::move((*init)->fd));
  if (!channel.ok()) {
    spdlog::error("{}: {}", label, channel.status().message());
    return kExecutorExitBadArgs;
  }

  devices::DeviceSettings settings;
  settings.backends = {args.backend};
  settings.options = args.options;
  settings.options[args.backend + ".ordinal"] = std::to_string(args.ordinal);
  // accordd reads CUDA's completion flags itself (completion words) and this process's
  // consumer polls the device while it spins, so the backend's own completion thread need
  // not spin after each completion (with many executors, one more busy thread each).
  if (args.backend == "cuda") settings.options.try_emplace("cuda.poll_spin_us", "0");
  const devices::BackendFactory* factory = nullptr;
  for (const devices::Backend& backend : catalog.backends())
    if (backend.name == args.backend) factory = &backend.factory;
  HelloInfo hello;
  hello.pid = static_cast<std::int32_t>(::getpid());
  std::unique_ptr<devices::Device> device;
  if (factory == nullptr) {
    hello.error = args.backend + ": no such backend in the executor";
  } else {
    auto opened = (*factory)(devices::BackendRequest{settings, true});
    if (!opened.ok()) {
      hello.error = std::string(opened.status().message());
    } else {
      for (auto& d : opened.value())
        if (d->info().kind == DeviceKind::Gpu && d->info().ordinal == args.ordinal) device = std::move(d);
      // The others (a backend that ignored the ordinal option) close here.
    }
  }
  if (device) hello = describe(*device);
  const std::vector<std::byte> payload = encode(hello);
  const int words = hello.completion_word_bytes != 0 ? device->completion_word_fd() : -1;
  if (Status sent = send_control(socket.get(), ControlOp::Hello, 0, 0, payload, words); !sent.ok()) {
    spdlog::error("{}: cannot say hello: {}", label, sent.message());
    return kExecutorExitBadArgs;
  }
  if (!hello.error.empty()) return kExecutorExitNoBackend;
  if (!device) return kExecutorExitOk;
  ExecutorServer server(std::move(device), std::move(channel).value(), std::move(socket), label);
  return server.run();
}

}  // namespace accord::executor

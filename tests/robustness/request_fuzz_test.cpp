// Random request bodies, as raw bytes, to every method of the control plane (through
// gRPC's generic stub, with a valid session token): garbage that fails to parse, and
// random protobuf fields that parse into requests no real client would build. Every
// call must come back (no hang), and the daemon must keep serving.
#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <google/protobuf/stubs/logging.h>
#include <grpcpp/generic/generic_stub.h>

#include "tests/robustness/robustness_fixture.h"

namespace robustness {
namespace {

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Random protobuf: fields 1..6 of every wire type, varints biased to small and extreme
// values, nested length-delimited fields (sub-messages such as views and contracts).
std::string random_message(std::mt19937_64& rng, int depth) {
  std::string out;
  const int fields = static_cast<int>(rng() % 6);
  for (int i = 0; i < fields; ++i) {
    const std::uint64_t field = rng() % 6 + 1;
    switch (rng() % 4) {
      case 0: {
        put_varint(out, field << 3 | 0);
        const std::uint64_t pick = rng() % 6;
        put_varint(out, pick == 0   ? rng() % 8
                        : pick == 1 ? rng() % 300
                        : pick == 2 ? ~std::uint64_t{0} - rng() % 4
                        : pick == 3 ? std::uint64_t{1} << (rng() % 64)
                                    : rng());
        break;
      }
      case 1: {
        put_varint(out, field << 3 | 2);
        const std::string inner = depth < 3 && rng() % 2 ? random_message(rng, depth + 1)
                                                         : std::string(rng() % 16, static_cast<char>(rng()));
        put_varint(out, inner.size());
        out += inner;
        break;
      }
      case 2:
        put_varint(out, field << 3 | 1);
        for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>(rng()));
        break;
      default:
        put_varint(out, field << 3 | 5);
        for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>(rng()));
        break;
    }
  }
  return out;
}

std::string random_bytes(std::mt19937_64& rng) {
  std::string out(rng() % 128, '\0');
  for (char& ch : out) ch = static_cast<char>(rng());
  return out;
}

grpc::Status generic_call(grpc::GenericStub& stub, const Session& s, const std::string& method,
                          const std::string& body) {
  grpc::Slice slice(body);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  auto context = make_context(s);
  std::promise<grpc::Status> done;
  stub.UnaryCall(context.get(), method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  return done.get_future().get();
}

// protobuf logs an error per invalid UTF-8 string it parses; expected here.
class QuietProtobufLog {
 public:
  QuietProtobufLog() : previous_(google::protobuf::SetLogHandler(&drop)) {}
  ~QuietProtobufLog() { google::protobuf::SetLogHandler(previous_); }
  QuietProtobufLog(const QuietProtobufLog&) = delete;
  QuietProtobufLog& operator=(const QuietProtobufLog&) = delete;

 private:
  static void drop(google::protobuf::LogLevel, const char*, int, const std::string&) {}
  google::protobuf::LogHandler* previous_;
};

}  // namespace

TEST_CASE("random request bodies to every method come back and leave the daemon serving",
          "[daemon][robustness]") {
  TestDaemon d;
  // A small budget: random Allocate sizes must not take the machine's memory.
  const Session s = d.open_session(1 << 20);
  auto channel = grpc::CreateChannel("unix:" + d.grpc_path(), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  // StartTrace is left out: a random capacity up to the 2^24-event cap allocates
  // hundreds of MiB per call, which is a limit question, not a parsing one.
  const std::vector<std::string> methods = {
      "ListDevices",  "GetSessionInfo", "Allocate",       "Free",         "LoadKernel",
      "ReleaseKernel", "PrepareGraph",  "ReleaseGraph",   "Submit",       "WaitCompletion",
      "PollCompletion", "Cancel",       "ReleaseCompletion", "AcquireLease", "ReleaseLease",
      "GetStatistics", "FinishTrace",   "ListSessions",
  };
  std::map<std::string, int> outcomes;  // code name -> count, for the report
  std::mt19937_64 rng(0xf022'ed'5eedULL);
  QuietProtobufLog quiet;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int calls = 0;
  for (int round = 0; round < 40 && std::chrono::steady_clock::now() < until; ++round) {
    for (const std::string& method : methods) {
      const std::string body = round % 4 == 0 ? random_bytes(rng) : random_message(rng, 0);
      const grpc::Status status = generic_call(stub, s, "/accord.v1.Accord/" + method, body);
      ++calls;
      ++outcomes[code_name(status.error_code())];
      INFO(method << " with " << body.size() << " random bytes: " << code_name(status.error_code()) << " '"
                  << status.error_message() << "'");
      CHECK(status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED);
      CHECK(status.error_code() != grpc::StatusCode::UNAVAILABLE);
      CHECK(status.error_code() != grpc::StatusCode::UNKNOWN);
    }
  }
  std::string summary;
  for (const auto& [code, count] : outcomes) summary += code + " " + std::to_string(count) + "; ";
  INFO(calls << " calls: " << summary);
  CHECK(calls >= 200);
  // A method that does not exist.
  CHECK(generic_call(stub, s, "/accord.v1.Accord/NoSuchMethod", "").error_code() ==
        grpc::StatusCode::UNIMPLEMENTED);
  require_serving(d, d.stub(), s);
  require_serving(d);
}

}  // namespace robustness

// Uses the installed library: an embedded runtime runs a fill and checks the bytes.
#include <accord/accord.h>

#include <cstdio>

int main() {
  auto runtime = accord::Runtime::embedded();
  if (!runtime.ok()) return 1;
  auto buffer = runtime->allocate(64);
  if (!buffer.ok()) return 1;
  accord::Graph graph = runtime->graph();
  if (!graph.fill(buffer->view(), 7).ok()) return 1;
  auto exe = std::move(graph).prepare();
  if (!exe.ok()) return 1;
  auto done = exe->submit();
  if (!done.ok() || !done->wait().ok()) return 1;
  auto bytes = buffer->map_read();
  if (!bytes.ok() || bytes->as<unsigned char>()[63] != 7) return 1;
  std::printf("consumer: find_package(accord) works\n");
  return 0;
}

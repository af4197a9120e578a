//===- HandleTest.cpp - NULL, destroyed, reused and foreign handles -------===//
//
// Every function that takes a handle, called with NULL and with a destroyed
// handle in each handle position; every required pointer NULL; handles of
// the wrong kind and made-up values; slots reused; handles made, used and
// destroyed from several threads; and the header compiled as C99.
//
//===----------------------------------------------------------------------===//

#include "CAPITestSupport.h"

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

extern "C" int kiln_capi_c99_smoke(void);

using namespace kiln::capi::test;

namespace {

/// One live handle of each kind, on one device.
struct Handles {
  kiln_device D = nullptr;
  kiln_kernel K = nullptr;
  kiln_buffer B = nullptr;
  kiln_stream S = nullptr;
  kiln_event E = nullptr;

  static Handles make() {
    Handles H;
    H.D = memoryDevice();
    H.K = loadKernel(H.D, AffineText);
    EXPECT_KILN_OK(kiln_buffer_allocate(64, &H.B));
    EXPECT_KILN_OK(kiln_stream_create(H.D, &H.S));
    EXPECT_KILN_OK(kiln_stream_record_event(H.S, &H.E));
    return H;
  }
  void destroy() {
    EXPECT_KILN_OK(kiln_event_destroy(E));
    EXPECT_KILN_OK(kiln_stream_destroy(S));
    EXPECT_KILN_OK(kiln_buffer_destroy(B));
    EXPECT_KILN_OK(kiln_kernel_destroy(K));
    EXPECT_KILN_OK(kiln_device_destroy(D));
  }
};

enum class Which { Device, Kernel, Buffer, Stream, Event };

/// A call with one handle replaced: Arg is the name the message uses.
struct HandleCase {
  Which Replaced;
  const char *Function;
  const char *Arg;
  std::function<kiln_status(const Handles &)> Call;
};

std::vector<HandleCase> handleCases() {
  static float Host[16];
  static kiln_arg AffineArgs[4];
  // @affine's arguments on H's buffer.
  auto Args = [](const Handles &H) {
    AffineArgs[0] = kiln_arg_buffer(H.B, f32(), KILN_ACCESS_READ_WRITE);
    AffineArgs[1] = kiln_arg_f32(1.0f);
    AffineArgs[2] = kiln_arg_f32(1.0f);
    AffineArgs[3] = kiln_arg_u32(16);
    return AffineArgs;
  };
  using W = Which;
  return {
      // Devices.
      {W::Device, "kiln_device_destroy", "device",
       [](const Handles &H) { return kiln_device_destroy(H.D); }},
      {W::Device, "kiln_device_get_info", "device",
       [](const Handles &H) {
         kiln_device_info I;
         return kiln_device_get_info(H.D, &I);
       }},
      {W::Device, "kiln_device_synchronize", "device",
       [](const Handles &H) { return kiln_device_synchronize(H.D); }},
      {W::Device, "kiln_device_launch", "device",
       [=](const Handles &H) {
         return kiln_device_launch(H.D, H.K, dim(1), Args(H), 4);
       }},
      {W::Device, "kiln_device_load_kernel", "device",
       [](const Handles &H) {
         kiln_kernel K;
         return kiln_device_load_kernel(H.D, AffineText, nullptr, nullptr, &K);
       }},
      {W::Device, "kiln_device_find_kernel", "device",
       [](const Handles &H) {
         kiln_kernel K;
         return kiln_device_find_kernel(H.D, "x", KILN_BOUNDS_CHECK_DEFAULT,
                                        &K);
       }},
      {W::Device, "kiln_device_unload_kernel", "device",
       [](const Handles &H) { return kiln_device_unload_kernel(H.D, H.K); }},
      {W::Device, "kiln_stream_create", "device",
       [](const Handles &H) {
         kiln_stream S;
         return kiln_stream_create(H.D, &S);
       }},
      // Kernels.
      {W::Kernel, "kiln_kernel_destroy", "kernel",
       [](const Handles &H) { return kiln_kernel_destroy(H.K); }},
      {W::Kernel, "kiln_kernel_get_info", "kernel",
       [](const Handles &H) {
         kiln_kernel_info I;
         return kiln_kernel_get_info(H.K, &I);
       }},
      {W::Kernel, "kiln_kernel_get_parameter", "kernel",
       [](const Handles &H) {
         kiln_parameter_info I;
         return kiln_kernel_get_parameter(H.K, 0, &I);
       }},
      {W::Kernel, "kiln_device_launch", "kernel",
       [=](const Handles &H) {
         return kiln_device_launch(H.D, H.K, dim(1), Args(H), 4);
       }},
      {W::Kernel, "kiln_stream_launch", "kernel",
       [=](const Handles &H) {
         return kiln_stream_launch(H.S, H.K, dim(1), Args(H), 4);
       }},
      {W::Kernel, "kiln_device_unload_kernel", "kernel",
       [](const Handles &H) { return kiln_device_unload_kernel(H.D, H.K); }},
      // Buffers.
      {W::Buffer, "kiln_buffer_destroy", "buffer",
       [](const Handles &H) { return kiln_buffer_destroy(H.B); }},
      {W::Buffer, "kiln_buffer_data", "buffer",
       [](const Handles &H) {
         void *P;
         return kiln_buffer_data(H.B, &P);
       }},
      {W::Buffer, "kiln_buffer_size", "buffer",
       [](const Handles &H) {
         uint64_t Size;
         return kiln_buffer_size(H.B, &Size);
       }},
      {W::Buffer, "kiln_stream_copy_to_buffer", "dst",
       [](const Handles &H) {
         return kiln_stream_copy_to_buffer(H.S, H.B, 0, Host, 4);
       }},
      {W::Buffer, "kiln_stream_copy_from_buffer", "src",
       [](const Handles &H) {
         return kiln_stream_copy_from_buffer(H.S, Host, H.B, 0, 4);
       }},
      {W::Buffer, "kiln_device_launch", "args[0].view.buffer",
       [=](const Handles &H) {
         return kiln_device_launch(H.D, H.K, dim(1), Args(H), 4);
       }},
      {W::Buffer, "kiln_stream_launch", "args[0].view.buffer",
       [=](const Handles &H) {
         return kiln_stream_launch(H.S, H.K, dim(1), Args(H), 4);
       }},
      // Streams.
      {W::Stream, "kiln_stream_destroy", "stream",
       [](const Handles &H) { return kiln_stream_destroy(H.S); }},
      {W::Stream, "kiln_stream_launch", "stream",
       [=](const Handles &H) {
         return kiln_stream_launch(H.S, H.K, dim(1), Args(H), 4);
       }},
      {W::Stream, "kiln_stream_copy_to_buffer", "stream",
       [](const Handles &H) {
         return kiln_stream_copy_to_buffer(H.S, H.B, 0, Host, 4);
       }},
      {W::Stream, "kiln_stream_copy_from_buffer", "stream",
       [](const Handles &H) {
         return kiln_stream_copy_from_buffer(H.S, Host, H.B, 0, 4);
       }},
      {W::Stream, "kiln_stream_copy_buffer", "stream",
       [](const Handles &H) {
         return kiln_stream_copy_buffer(H.S, H.B, 0, H.B, 4, 4);
       }},
      {W::Stream, "kiln_stream_record_event", "stream",
       [](const Handles &H) {
         kiln_event E;
         return kiln_stream_record_event(H.S, &E);
       }},
      {W::Stream, "kiln_stream_wait_event", "stream",
       [](const Handles &H) { return kiln_stream_wait_event(H.S, H.E); }},
      {W::Stream, "kiln_stream_synchronize", "stream",
       [](const Handles &H) { return kiln_stream_synchronize(H.S); }},
      {W::Stream, "kiln_stream_status", "stream",
       [](const Handles &H) { return kiln_stream_status(H.S); }},
      {W::Stream, "kiln_stream_reset_error", "stream",
       [](const Handles &H) {
         kiln_status Cleared;
         return kiln_stream_reset_error(H.S, &Cleared);
       }},
      // Events.
      {W::Event, "kiln_event_destroy", "event",
       [](const Handles &H) { return kiln_event_destroy(H.E); }},
      {W::Event, "kiln_event_synchronize", "event",
       [](const Handles &H) { return kiln_event_synchronize(H.E); }},
      {W::Event, "kiln_event_query", "event",
       [](const Handles &H) {
         bool Done;
         return kiln_event_query(H.E, &Done);
       }},
      {W::Event, "kiln_stream_wait_event", "event",
       [](const Handles &H) { return kiln_stream_wait_event(H.S, H.E); }},
  };
}

/// \p Good with the handle \p W replaced by \p Bad's.
Handles replaced(Handles Good, const Handles &Bad, Which W) {
  switch (W) {
  case Which::Device:
    Good.D = Bad.D;
    break;
  case Which::Kernel:
    Good.K = Bad.K;
    break;
  case Which::Buffer:
    Good.B = Bad.B;
    break;
  case Which::Stream:
    Good.S = Bad.S;
    break;
  case Which::Event:
    Good.E = Bad.E;
    break;
  }
  return Good;
}

TEST(CAPIHandleTest, NullHandles) {
  Handles Good = Handles::make();
  for (const HandleCase &C : handleCases()) {
    SCOPED_TRACE(std::string(C.Function) + " with a NULL " + C.Arg);
    EXPECT_EQ(C.Call(replaced(Good, Handles(), C.Replaced)),
              KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(kiln_last_error()),
              std::string(C.Function) + ": " + C.Arg + " is NULL");
  }
  // Nothing was harmed: the handles all still work.
  EXPECT_KILN_OK(kiln_stream_status(Good.S));
  Good.destroy();
}

TEST(CAPIHandleTest, DestroyedHandles) {
  Handles Good = Handles::make();
  Handles Dead = Handles::make();
  Dead.destroy(); // in the reverse order of making
  for (const HandleCase &C : handleCases()) {
    SCOPED_TRACE(std::string(C.Function) + " with a destroyed " + C.Arg);
    EXPECT_EQ(C.Call(replaced(Good, Dead, C.Replaced)),
              KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(kiln_last_error()),
              std::string(C.Function) + ": " + C.Arg + " handle was destroyed");
  }
  EXPECT_KILN_OK(kiln_stream_status(Good.S));
  Good.destroy();
}

TEST(CAPIHandleTest, NullRequiredPointers) {
  Handles H = Handles::make();
  struct PointerCase {
    const char *Message;
    std::function<kiln_status()> Call;
  };
  std::vector<PointerCase> Cases = {
      {"kiln_device_config_init: config is NULL",
       [] { return kiln_device_config_init(nullptr); }},
      {"kiln_kernel_options_init: options is NULL",
       [] { return kiln_kernel_options_init(nullptr); }},
      {"kiln_element_type_parse: text is NULL",
       [] {
         kiln_element_type T;
         return kiln_element_type_parse(nullptr, &T);
       }},
      {"kiln_element_type_parse: out_type is NULL",
       [] { return kiln_element_type_parse("f32", nullptr); }},
      {"kiln_element_type_size: out_bytes is NULL",
       [] { return kiln_element_type_size(f32(), nullptr); }},
      {"kiln_arg_value: out_arg is NULL",
       [] { return kiln_arg_value(f32(), nullptr, 0, nullptr); }},
      {"kiln_device_create: out_device is NULL",
       [] { return kiln_device_create(nullptr, nullptr); }},
      {"kiln_device_get_info: out_info is NULL",
       [&] { return kiln_device_get_info(H.D, nullptr); }},
      {"kiln_device_launch: args is NULL but arg_count is 4",
       [&] { return kiln_device_launch(H.D, H.K, dim(1), nullptr, 4); }},
      {"kiln_device_load_kernel: text is NULL",
       [&] {
         kiln_kernel K;
         return kiln_device_load_kernel(H.D, nullptr, nullptr, nullptr, &K);
       }},
      {"kiln_device_load_kernel: out_kernel is NULL",
       [&] {
         return kiln_device_load_kernel(H.D, AffineText, nullptr, nullptr,
                                        nullptr);
       }},
      {"kiln_device_find_kernel: id is NULL",
       [&] {
         kiln_kernel K;
         return kiln_device_find_kernel(H.D, nullptr, KILN_BOUNDS_CHECK_ON, &K);
       }},
      {"kiln_device_find_kernel: out_kernel is NULL",
       [&] {
         return kiln_device_find_kernel(H.D, "x", KILN_BOUNDS_CHECK_ON,
                                        nullptr);
       }},
      {"kiln_kernel_get_info: out_info is NULL",
       [&] { return kiln_kernel_get_info(H.K, nullptr); }},
      {"kiln_kernel_get_parameter: out_info is NULL",
       [&] { return kiln_kernel_get_parameter(H.K, 0, nullptr); }},
      {"kiln_buffer_allocate: out_buffer is NULL",
       [] { return kiln_buffer_allocate(4, nullptr); }},
      {"kiln_buffer_wrap: out_buffer is NULL",
       [] { return kiln_buffer_wrap(nullptr, 0, nullptr); }},
      {"kiln_buffer_wrap: data is NULL but size is 4",
       [] {
         kiln_buffer B;
         return kiln_buffer_wrap(nullptr, 4, &B);
       }},
      {"kiln_buffer_data: out_data is NULL",
       [&] { return kiln_buffer_data(H.B, nullptr); }},
      {"kiln_buffer_size: out_size is NULL",
       [&] { return kiln_buffer_size(H.B, nullptr); }},
      {"kiln_stream_create: out_stream is NULL",
       [&] { return kiln_stream_create(H.D, nullptr); }},
      {"kiln_stream_launch: args is NULL but arg_count is 1",
       [&] { return kiln_stream_launch(H.S, H.K, dim(1), nullptr, 1); }},
      {"kiln_stream_copy_to_buffer: src is NULL but size is 4",
       [&] { return kiln_stream_copy_to_buffer(H.S, H.B, 0, nullptr, 4); }},
      {"kiln_stream_copy_from_buffer: dst is NULL but size is 4",
       [&] { return kiln_stream_copy_from_buffer(H.S, nullptr, H.B, 0, 4); }},
      {"kiln_stream_copy_buffer: dst is NULL",
       [&] { return kiln_stream_copy_buffer(H.S, nullptr, 0, H.B, 0, 4); }},
      {"kiln_stream_copy_buffer: src is NULL",
       [&] { return kiln_stream_copy_buffer(H.S, H.B, 0, nullptr, 0, 4); }},
      {"kiln_stream_record_event: out_event is NULL",
       [&] { return kiln_stream_record_event(H.S, nullptr); }},
      {"kiln_event_query: out_complete is NULL",
       [&] { return kiln_event_query(H.E, nullptr); }},
  };
  for (const PointerCase &C : Cases) {
    SCOPED_TRACE(C.Message);
    EXPECT_EQ(C.Call(), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(kiln_last_error(), C.Message);
  }
  EXPECT_KILN_OK(kiln_stream_status(H.S));
  H.destroy();
}

TEST(CAPIHandleTest, WrongKindAndMadeUpValues) {
  Handles H = Handles::make();
  // A handle of another kind (a C caller's cast).
  EXPECT_EQ(kiln_stream_synchronize(reinterpret_cast<kiln_stream>(H.E)),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_stream_synchronize: stream is a "
                                  "kiln_event handle, not a kiln_stream");
  EXPECT_EQ(kiln_device_destroy(reinterpret_cast<kiln_device>(H.K)),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_device_destroy: device is a "
                                  "kiln_kernel handle, not a kiln_device");
  EXPECT_EQ(kiln_buffer_destroy(reinterpret_cast<kiln_buffer>(H.D)),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_buffer_destroy: buffer is a "
                                  "kiln_device handle, not a kiln_buffer");

  // Made-up values, including real pointers: never dereferenced.
  int Local = 0;
  uintptr_t Bits = reinterpret_cast<uintptr_t>(H.E);
  const uintptr_t Values[] = {
      1,
      0x1234,
      reinterpret_cast<uintptr_t>(&Local),
      ~uintptr_t(0),
      Bits & ~uintptr_t(0xffffff),              // index 0
      (Bits & ~uintptr_t(0xffffff)) | 0xfffffe, // a slot never made
      Bits + (uintptr_t(2) << 24),              // a generation never issued
      Bits + (uintptr_t(1) << 24),              // an even generation
  };
  for (uintptr_t V : Values) {
    SCOPED_TRACE(V);
    bool Done;
    EXPECT_EQ(kiln_event_query(reinterpret_cast<kiln_event>(V), &Done),
              KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(kiln_last_error(),
                 "kiln_event_query: event is not a valid kiln_event handle");
  }
  EXPECT_EQ(Local, 0);
  // The real one still works.
  bool Done = false;
  EXPECT_KILN_OK(kiln_event_query(H.E, &Done));
  H.destroy();
}

TEST(CAPIHandleTest, DoubleDestroy) {
  kiln_buffer B = nullptr;
  ASSERT_KILN_OK(kiln_buffer_allocate(8, &B));
  ASSERT_KILN_OK(kiln_buffer_destroy(B));
  EXPECT_EQ(kiln_buffer_destroy(B), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "kiln_buffer_destroy: buffer handle was destroyed");
}

TEST(CAPIHandleTest, StaleHandlesStayDetectedWhenSlotsAreReused) {
  // Far more handles made and destroyed than the slots waiting for reuse:
  // slots are reused, with new generations.
  std::vector<kiln_buffer> Stale;
  for (int I = 0; I < 500; ++I) {
    kiln_buffer B = nullptr;
    ASSERT_KILN_OK(kiln_buffer_allocate(4, &B));
    Stale.push_back(B);
    ASSERT_KILN_OK(kiln_buffer_destroy(B));
  }
  std::vector<kiln_buffer> Live;
  for (int I = 0; I < 100; ++I) {
    kiln_buffer B = nullptr;
    ASSERT_KILN_OK(kiln_buffer_allocate(uint64_t(I) + 1, &B));
    Live.push_back(B);
  }
  // A slot of a stale handle now holds a live one (same low 24 bits).
  bool Reused = false;
  for (kiln_buffer S : Stale)
    for (kiln_buffer L : Live)
      Reused |=
          ((reinterpret_cast<uintptr_t>(S) ^ reinterpret_cast<uintptr_t>(L)) &
           0xffffff) == 0;
  EXPECT_TRUE(Reused);
  for (kiln_buffer S : Stale) {
    uint64_t Size;
    ASSERT_EQ(kiln_buffer_size(S, &Size), KILN_ERROR_INVALID_ARGUMENT);
    ASSERT_STREQ(kiln_last_error(),
                 "kiln_buffer_size: buffer handle was destroyed");
  }
  for (size_t I = 0; I < Live.size(); ++I) {
    uint64_t Size = 0;
    ASSERT_KILN_OK(kiln_buffer_size(Live[I], &Size));
    EXPECT_EQ(Size, I + 1);
    EXPECT_KILN_OK(kiln_buffer_destroy(Live[I]));
  }
}

TEST(CAPIHandleTest, ManyThreads) {
  // Threads make, use and destroy buffers, events and streams at once.
  kiln_device D = memoryDevice();
  std::atomic<int> Failures{0};
  auto Work = [&](int Seed) {
    kiln_stream S = nullptr;
    if (kiln_stream_create(D, &S) != KILN_OK)
      ++Failures;
    for (int I = 0; I < 300; ++I) {
      kiln_buffer B = nullptr;
      uint64_t Size = 0;
      uint32_t Word = uint32_t(Seed * 1000 + I), Back = 0;
      kiln_event E = nullptr;
      if (kiln_buffer_allocate(uint64_t(I % 7 + 1) * 4, &B) != KILN_OK ||
          kiln_buffer_size(B, &Size) != KILN_OK ||
          Size != uint64_t(I % 7 + 1) * 4 ||
          kiln_stream_copy_to_buffer(S, B, 0, &Word, 4) != KILN_OK ||
          kiln_stream_copy_from_buffer(S, &Back, B, 0, 4) != KILN_OK ||
          kiln_stream_record_event(S, &E) != KILN_OK ||
          kiln_event_synchronize(E) != KILN_OK || Back != Word ||
          kiln_event_destroy(E) != KILN_OK || kiln_buffer_destroy(B) != KILN_OK)
        ++Failures;
    }
    if (kiln_stream_destroy(S) != KILN_OK)
      ++Failures;
  };
  std::vector<std::thread> Threads;
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back(Work, T);
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Failures.load(), 0);
  EXPECT_KILN_OK(kiln_device_destroy(D));
}

TEST(CAPIHandleTest, TablesUnderContention) {
  // Only the handle tables (no device): threads make, look up and destroy
  // buffers, and look up each other's destroyed ones.
  constexpr int Threads = 4, Rounds = 3000;
  std::vector<kiln_buffer> Dead[Threads];
  std::atomic<int> Failures{0};
  auto Work = [&](int T) {
    for (int I = 0; I < Rounds; ++I) {
      kiln_buffer B = nullptr;
      uint64_t Size = 0;
      if (kiln_buffer_wrap(nullptr, 0, &B) != KILN_OK ||
          kiln_buffer_size(B, &Size) != KILN_OK || Size != 0 ||
          kiln_buffer_destroy(B) != KILN_OK ||
          kiln_buffer_size(B, &Size) != KILN_ERROR_INVALID_ARGUMENT)
        ++Failures;
      if (I % 100 == 0)
        Dead[T].push_back(B);
    }
  };
  std::vector<std::thread> Pool;
  for (int T = 0; T < Threads; ++T)
    Pool.emplace_back(Work, T);
  for (std::thread &T : Pool)
    T.join();
  EXPECT_EQ(Failures.load(), 0);
  for (auto &List : Dead)
    for (kiln_buffer B : List) {
      uint64_t Size;
      EXPECT_EQ(kiln_buffer_size(B, &Size), KILN_ERROR_INVALID_ARGUMENT);
    }
}

TEST(CAPIHandleTest, DestroyRacingAUseIsMemorySafe) {
  // A caller's bug, but a sound one: the user sees the buffer, then sees it
  // destroyed, and nothing else.
  for (int Round = 0; Round < 20; ++Round) {
    kiln_buffer B = nullptr;
    ASSERT_KILN_OK(kiln_buffer_allocate(16, &B));
    std::atomic<bool> Started{false};
    std::atomic<int> Bad{0};
    std::thread User([&] {
      bool SawDestroyed = false;
      for (int I = 0; I < 20000; ++I) {
        uint64_t Size = 0;
        kiln_status St = kiln_buffer_size(B, &Size);
        Started = true;
        if (St == KILN_OK) {
          if (SawDestroyed || Size != 16)
            ++Bad;
        } else if (St == KILN_ERROR_INVALID_ARGUMENT &&
                   std::string(kiln_last_error()) ==
                       "kiln_buffer_size: buffer handle was destroyed") {
          SawDestroyed = true;
        } else {
          ++Bad;
        }
      }
    });
    while (!Started)
      std::this_thread::yield();
    EXPECT_KILN_OK(kiln_buffer_destroy(B));
    User.join();
    EXPECT_EQ(Bad.load(), 0);
  }
}

TEST(CAPIHeaderTest, CompilesAsC99AndWorksFromC) {
  // HeaderC99.c is compiled with -std=c99 -pedantic -Werror.
  EXPECT_EQ(kiln_capi_c99_smoke(), 0) << kiln_last_error();
}

} // namespace

//===- CallbackTest.cpp - What a callback may call back into --------------===//
//
// Callbacks run with no Kiln lock held, so that they may call the device;
// the calls that would wait for the callback itself are refused at once.
// Once a warning callback that asked for kiln_device_get_info deadlocked
// (the store raised the warning under its lock), and a debug-print callback
// that synchronised its own stream, synchronised the device or destroyed it
// hung. Each test runs under a deadline: a deadlock ends the test binary
// with a message instead of hanging ctest.
//
//===----------------------------------------------------------------------===//

#include "CAPITestSupport.h"

#include "Support/TempDir.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <sys/stat.h>
#include <thread>

using namespace kiln::capi::test;
using kiln::test::TempDir;

namespace {

/// Runs \p F on a thread of its own; when it has not returned within a
/// minute (a deadlock), the test binary ends with status 1.
void withinDeadline(const std::function<void()> &F) {
  std::promise<void> Done;
  std::future<void> Finished = Done.get_future();
  std::thread T([&] {
    F();
    Done.set_value();
  });
  if (Finished.wait_for(std::chrono::seconds(60)) !=
      std::future_status::ready) {
    std::fprintf(
        stderr, "%s: still running after 60 s: a deadlock\n",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::fflush(stderr);
    std::_Exit(1);
  }
  T.join();
}

/// What a warning callback did: the device it asks about, and the answers.
struct WarningProbe {
  kiln_device Device = nullptr;
  int Warnings = 0;
  int InfoOk = 0;
  kiln_status Destroy = KILN_OK;
  std::string DestroyError;
  std::string First;
};

void probeWarning(const char *Message, void *User) {
  auto *P = static_cast<WarningProbe *>(User);
  if (P->Warnings++ == 0)
    P->First = Message;
  if (!P->Device)
    return; // during kiln_device_create
  kiln_device_info Info;
  if (kiln_device_get_info(P->Device, &Info) == KILN_OK)
    ++P->InfoOk;
  P->Destroy = kiln_device_destroy(P->Device);
  P->DestroyError = kiln_last_error();
}

kiln_device storeDevice(const std::string &Dir, kiln_store_mode Mode,
                        WarningProbe *P) {
  kiln_device_config Config;
  EXPECT_KILN_OK(kiln_device_config_init(&Config));
  Config.store_dir = Dir.c_str();
  Config.store_mode = Mode;
  if (P) {
    Config.warning_callback = probeWarning;
    Config.warning_user_data = P;
  }
  kiln_device D = nullptr;
  EXPECT_KILN_OK(kiln_device_create(&Config, &D));
  return D;
}

void expectRefusedDestroy(const WarningProbe &P) {
  EXPECT_EQ(P.Destroy, KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(P.DestroyError.find("kiln_device_destroy: called from a callback "
                                "of this device"),
            std::string::npos)
      << P.DestroyError;
}

TEST(CAPICallbackTest, WarningOfAnUntrustedFolderMayAskForTheDevicesState) {
  TempDir Root;
  // A store folder others can write to: one warning, raised the first time
  // the store is used, under its lock.
  ASSERT_EQ(::chmod(Root.path().c_str(), 0777), 0);
  WarningProbe P;
  withinDeadline([&] {
    P.Device = storeDevice(Root.path(), KILN_STORE_READ_ONLY, &P);
    kiln_device_info Info;
    EXPECT_KILN_OK(kiln_device_get_info(P.Device, &Info));
    EXPECT_FALSE(Info.has_store);
  });
  EXPECT_EQ(P.Warnings, 1);
  EXPECT_NE(P.First.find("others can write to it"), std::string::npos)
      << P.First;
  EXPECT_EQ(P.InfoOk, 1);
  expectRefusedDestroy(P);
  EXPECT_KILN_OK(kiln_device_destroy(P.Device));
}

TEST(CAPICallbackTest, WarningOfADamagedEntryMayCallTheDevice) {
  TempDir Root;
  kiln_device First = storeDevice(Root.path(), KILN_STORE_READ_WRITE, nullptr);
  kiln_kernel K = loadKernel(First, VaddText);
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  EXPECT_KILN_OK(kiln_device_destroy(First));
  // Every entry damaged: the next load purges it with a warning, under the
  // store's lock.
  int Damaged = 0;
  for (const auto &E :
       std::filesystem::recursive_directory_iterator(Root.path()))
    if (E.path().extension() == ".entry") {
      std::fstream F(E.path(), std::ios::in | std::ios::out | std::ios::binary);
      F.seekp(40);
      F.write("\xff\xff\xff\xff", 4);
      ++Damaged;
    }
  ASSERT_GT(Damaged, 0);
  WarningProbe P;
  withinDeadline([&] {
    P.Device = storeDevice(Root.path(), KILN_STORE_READ_WRITE, &P);
    kiln_kernel Again = loadKernel(P.Device, VaddText);
    EXPECT_NE(Again, nullptr);
    EXPECT_KILN_OK(kiln_kernel_destroy(Again));
  });
  EXPECT_GE(P.Warnings, 1);
  EXPECT_NE(P.First.find("bad store entry"), std::string::npos) << P.First;
  EXPECT_EQ(P.InfoOk, P.Warnings);
  expectRefusedDestroy(P);
  EXPECT_KILN_OK(kiln_device_destroy(P.Device));
}

const char *PrintText = R"(
kernel @p cube_dim(1) () {
  debug_print "hello\n"
}
)";

/// What a debug-print callback did with the calls that would wait for it.
struct PrintProbe {
  kiln_device Device = nullptr;
  kiln_stream Own = nullptr, Other = nullptr;
  int Calls = 0;
  kiln_status OwnSync = KILN_OK, DeviceSync = KILN_OK, Destroy = KILN_OK,
              Reset = KILN_OK, OtherSync = KILN_ERROR_INTERNAL,
              Info = KILN_ERROR_INTERNAL;
  std::string OwnSyncError, DeviceSyncError;
};

void probePrint(const char *, size_t, void *User) {
  auto *P = static_cast<PrintProbe *>(User);
  ++P->Calls;
  kiln_device_info Info;
  P->Info = kiln_device_get_info(P->Device, &Info);
  if (P->Own) {
    P->OwnSync = kiln_stream_synchronize(P->Own);
    P->OwnSyncError = kiln_last_error();
    P->Reset = kiln_stream_reset_error(P->Own, nullptr);
    P->OtherSync = kiln_stream_synchronize(P->Other);
  }
  P->DeviceSync = kiln_device_synchronize(P->Device);
  P->DeviceSyncError = kiln_last_error();
  P->Destroy = kiln_device_destroy(P->Device);
}

TEST(CAPICallbackTest, DebugPrintCallbackOfAStreamLaunchIsNeverWaitedFor) {
  PrintProbe P;
  P.Device = memoryDevice();
  kiln_kernel K = loadKernel(P.Device, PrintText);
  ASSERT_KILN_OK(kiln_stream_create(P.Device, &P.Own));
  ASSERT_KILN_OK(kiln_stream_create(P.Device, &P.Other));
  ASSERT_KILN_OK(
      kiln_device_set_debug_print_callback(P.Device, probePrint, &P));
  withinDeadline([&] {
    // Run by the host in kiln_stream_synchronize, or by a worker: the same.
    for (int I = 0; I != 4; ++I) {
      ASSERT_KILN_OK(kiln_stream_launch(P.Own, K, dim(1), nullptr, 0));
      if (I % 2)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      EXPECT_KILN_OK(kiln_stream_synchronize(P.Own));
    }
  });
  EXPECT_EQ(P.Calls, 4);
  EXPECT_EQ(P.Info, KILN_OK);
  EXPECT_EQ(P.OwnSync, KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(P.OwnSyncError.find("Stream::synchronize: called from a "
                                "debug-print callback of a launch on this "
                                "stream"),
            std::string::npos)
      << P.OwnSyncError;
  EXPECT_EQ(P.Reset, KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(P.OtherSync, KILN_OK); // another stream, idle
  EXPECT_EQ(P.DeviceSync, KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(P.DeviceSyncError.find("Device::synchronize: called from a "
                                   "debug-print callback"),
            std::string::npos)
      << P.DeviceSyncError;
  EXPECT_EQ(P.Destroy, KILN_ERROR_INVALID_ARGUMENT);
  // The stream is not failed by what its callback was refused.
  EXPECT_KILN_OK(kiln_stream_status(P.Own));
  EXPECT_KILN_OK(kiln_stream_destroy(P.Own));
  EXPECT_KILN_OK(kiln_stream_destroy(P.Other));
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  EXPECT_KILN_OK(kiln_device_destroy(P.Device));
}

/// What a debug-print callback got from an event recorded after its launch.
struct EventProbe {
  std::atomic<kiln_event> Later{nullptr};
  bool Seen = false;
  kiln_status Sync = KILN_OK;
  std::string Error;
};

void probeEvent(const char *, size_t, void *User) {
  auto *P = static_cast<EventProbe *>(User);
  if (kiln_event E = P->Later.load()) {
    P->Seen = true;
    P->Sync = kiln_event_synchronize(E);
    P->Error = kiln_last_error();
  }
}

TEST(CAPICallbackTest, EventRecordedAfterThePrintingLaunchIsNotWaitedFor) {
  kiln_device D = memoryDevice();
  kiln_kernel Spin = loadKernel(D, SpinText);
  kiln_kernel K = loadKernel(D, PrintText);
  kiln_stream S = nullptr;
  ASSERT_KILN_OK(kiln_stream_create(D, &S));
  EventProbe P;
  ASSERT_KILN_OK(kiln_device_set_debug_print_callback(D, probeEvent, &P));
  kiln_buffer Data = floatBuffer({1.0f});
  withinDeadline([&] {
    // A long launch first, so that the event is recorded (and known to the
    // callback) before the printing launch runs.
    kiln_arg Args[2] = {kiln_arg_buffer(Data, f32(), KILN_ACCESS_READ_WRITE),
                        kiln_arg_u32(120u << 20)};
    ASSERT_KILN_OK(kiln_stream_launch(S, Spin, dim(1), Args, 2));
    ASSERT_KILN_OK(kiln_stream_launch(S, K, dim(1), nullptr, 0));
    kiln_event Later = nullptr;
    ASSERT_KILN_OK(kiln_stream_record_event(S, &Later));
    P.Later.store(Later);
    EXPECT_KILN_OK(kiln_stream_synchronize(S));
    EXPECT_KILN_OK(kiln_event_synchronize(Later));
    EXPECT_KILN_OK(kiln_event_destroy(Later));
  });
  EXPECT_TRUE(P.Seen);
  EXPECT_EQ(P.Sync, KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(P.Error.find("Event::synchronize: called from a debug-print "
                         "callback"),
            std::string::npos)
      << P.Error;
  EXPECT_KILN_OK(kiln_buffer_destroy(Data));
  EXPECT_KILN_OK(kiln_stream_destroy(S));
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  EXPECT_KILN_OK(kiln_kernel_destroy(Spin));
  EXPECT_KILN_OK(kiln_device_destroy(D));
}

TEST(CAPICallbackTest, DebugPrintCallbackOfADeviceLaunchRunsUnlocked) {
  PrintProbe P;
  P.Device = memoryDevice();
  kiln_kernel K = loadKernel(P.Device, PrintText);
  ASSERT_KILN_OK(
      kiln_device_set_debug_print_callback(P.Device, probePrint, &P));
  withinDeadline([&] {
    EXPECT_KILN_OK(kiln_device_launch(P.Device, K, dim(1), nullptr, 0));
  });
  EXPECT_EQ(P.Calls, 1);
  EXPECT_EQ(P.Info, KILN_OK);
  // No stream waits for a launch without one.
  EXPECT_EQ(P.DeviceSync, KILN_OK);
  EXPECT_EQ(P.Destroy, KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  EXPECT_KILN_OK(kiln_device_destroy(P.Device));
}

} // namespace

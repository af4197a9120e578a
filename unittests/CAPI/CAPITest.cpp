//===- CAPITest.cpp - Errors, types, arguments, devices, kernels, buffers -===//
//
// The C API (include/kiln-c/kiln.h) called as a C program calls it. The
// streams and events are in StreamTest.cpp, the handle tables in
// HandleTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "CAPITestSupport.h"

#include "kiln/Store/RemoteTier.h"
#include "kiln/kiln.h"

#include <barrier>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

using namespace kiln::capi::test;

namespace {

//===-- Status codes and the last error -----------------------------------===//

TEST(CAPIStatusTest, ValuesAreTheCppErrorCodes) {
  using kiln::api::ErrorCode;
  EXPECT_EQ(KILN_OK, static_cast<int>(ErrorCode::Ok));
  EXPECT_EQ(KILN_ERROR_INVALID_ARGUMENT,
            static_cast<int>(ErrorCode::InvalidArgument));
  EXPECT_EQ(KILN_ERROR_INVALID_KERNEL,
            static_cast<int>(ErrorCode::InvalidKernel));
  EXPECT_EQ(KILN_ERROR_INVALID_LAUNCH,
            static_cast<int>(ErrorCode::InvalidLaunch));
  EXPECT_EQ(KILN_ERROR_OUT_OF_MEMORY, static_cast<int>(ErrorCode::OutOfMemory));
  EXPECT_EQ(KILN_ERROR_STORE, static_cast<int>(ErrorCode::StoreFailure));
  EXPECT_EQ(KILN_ERROR_NOT_FOUND, static_cast<int>(ErrorCode::NotFound));
  EXPECT_EQ(KILN_ERROR_CANCELLED, static_cast<int>(ErrorCode::Cancelled));
  EXPECT_EQ(KILN_ERROR_INTERNAL, static_cast<int>(ErrorCode::Internal));
}

TEST(CAPIStatusTest, Names) {
  EXPECT_STREQ(kiln_status_name(KILN_OK), "ok");
  EXPECT_STREQ(kiln_status_name(KILN_ERROR_INVALID_ARGUMENT),
               "invalid argument");
  EXPECT_STREQ(kiln_status_name(KILN_ERROR_INVALID_KERNEL), "invalid kernel");
  EXPECT_STREQ(kiln_status_name(KILN_ERROR_INVALID_LAUNCH), "invalid launch");
  EXPECT_STREQ(kiln_status_name(KILN_ERROR_OUT_OF_MEMORY), "out of memory");
  EXPECT_STREQ(kiln_status_name(KILN_ERROR_STORE), "store failure");
  EXPECT_STREQ(kiln_status_name(KILN_ERROR_NOT_FOUND), "not found");
  EXPECT_STREQ(kiln_status_name(KILN_ERROR_CANCELLED), "cancelled");
  EXPECT_STREQ(kiln_status_name(KILN_ERROR_INTERNAL), "internal error");
  EXPECT_STREQ(kiln_status_name(KILN_ERROR_KERNEL_FAULT), "kernel fault");
  EXPECT_STREQ(kiln_status_name(static_cast<kiln_status>(10)),
               "unknown status");
  // (Negative values are checked from C, in HeaderC99.c: a C++ caller
  // cannot make one.)
}

TEST(CAPILastErrorTest, SetOnFailureClearedOnSuccess) {
  uint64_t Size = 0;
  EXPECT_EQ(kiln_buffer_size(nullptr, &Size), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_buffer_size: buffer is NULL");
  // Functions that cannot fail leave it alone.
  (void)kiln_status_name(KILN_OK);
  (void)kiln_arg_f32(1.0f);
  (void)kiln_scalar(KILN_F32);
  (void)kiln_line(KILN_F32, 4);
  EXPECT_STREQ(kiln_last_error(), "kiln_buffer_size: buffer is NULL");
  // Any success clears it.
  kiln_device_config Config;
  EXPECT_KILN_OK(kiln_device_config_init(&Config));
  EXPECT_STREQ(kiln_last_error(), "");
  EXPECT_NE(kiln_last_error(), nullptr);
}

TEST(CAPILastErrorTest, IsPerThread) {
  // Two threads fail differently, then each reads its own message while the
  // other's is still set; this thread's is a third one.
  EXPECT_EQ(kiln_device_get_info(nullptr, nullptr),
            KILN_ERROR_INVALID_ARGUMENT);
  std::barrier Both(2);
  std::string Seen[2];
  auto Run = [&](int I) {
    if (I == 0) {
      uint64_t Size;
      EXPECT_EQ(kiln_buffer_size(nullptr, &Size), KILN_ERROR_INVALID_ARGUMENT);
    } else {
      EXPECT_EQ(kiln_event_query(nullptr, nullptr),
                KILN_ERROR_INVALID_ARGUMENT);
    }
    Both.arrive_and_wait(); // both messages are set now
    Seen[I] = kiln_last_error();
    Both.arrive_and_wait();
    if (I == 0) {
      kiln_device_config Config;
      EXPECT_KILN_OK(kiln_device_config_init(&Config)); // clears thread 0's
    }
    Both.arrive_and_wait();
    if (I == 1)
      Seen[1] += std::string(" / ") + kiln_last_error();
  };
  std::thread T0(Run, 0), T1(Run, 1);
  T0.join();
  T1.join();
  EXPECT_EQ(Seen[0], "kiln_buffer_size: buffer is NULL");
  EXPECT_EQ(Seen[1], "kiln_event_query: event is NULL / "
                     "kiln_event_query: event is NULL");
  // And this thread's is its own: untouched by both.
  EXPECT_STREQ(kiln_last_error(), "kiln_device_get_info: device is NULL");
}

//===-- Element types -----------------------------------------------------===//

TEST(CAPIElementTypeTest, Constructors) {
  kiln_element_type T = kiln_scalar(KILN_F16);
  EXPECT_EQ(T.scalar, KILN_F16);
  EXPECT_EQ(T.lanes, 0u);
  T = kiln_line(KILN_I8, 16);
  EXPECT_EQ(T.scalar, KILN_I8);
  EXPECT_EQ(T.lanes, 16u);
  // The C++ API's scalar order.
  EXPECT_EQ(KILN_F64, static_cast<int>(kiln::api::ScalarType::F64));
  EXPECT_EQ(KILN_BF16, static_cast<int>(kiln::api::ScalarType::BF16));
  EXPECT_EQ(KILN_U8, static_cast<int>(kiln::api::ScalarType::U8));
  EXPECT_EQ(KILN_F8E4M3, static_cast<int>(kiln::api::ScalarType::F8E4M3));
  EXPECT_EQ(KILN_F4E2M1X2,
            static_cast<int>(kiln::api::ScalarType::F4E2M1X2));
  EXPECT_EQ(KILN_UE8M0, static_cast<int>(kiln::api::ScalarType::UE8M0));
}

TEST(CAPIElementTypeTest, Parse) {
  kiln_element_type T = {};
  ASSERT_KILN_OK(kiln_element_type_parse("f32", &T));
  EXPECT_EQ(T.scalar, KILN_F32);
  EXPECT_EQ(T.lanes, 0u);
  ASSERT_KILN_OK(kiln_element_type_parse("vec<3 x u16>", &T));
  EXPECT_EQ(T.scalar, KILN_U16);
  EXPECT_EQ(T.lanes, 3u);

  EXPECT_EQ(kiln_element_type_parse("f33", &T), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("kiln_element_type_parse: 'f33' is not an element "
                           "type"));
  EXPECT_EQ(kiln_element_type_parse("vec<5 x f32>", &T),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_element_type_parse(nullptr, &T), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_element_type_parse: text is NULL");
  EXPECT_EQ(kiln_element_type_parse("f32", nullptr),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_element_type_parse: out_type is NULL");
}

TEST(CAPIElementTypeTest, Size) {
  uint32_t Bytes = 0;
  ASSERT_KILN_OK(kiln_element_type_size(kiln_scalar(KILN_F32), &Bytes));
  EXPECT_EQ(Bytes, 4u);
  ASSERT_KILN_OK(kiln_element_type_size(kiln_line(KILN_F32, 3), &Bytes));
  EXPECT_EQ(Bytes, 12u);
  ASSERT_KILN_OK(kiln_element_type_size(kiln_scalar(KILN_BOOL), &Bytes));
  EXPECT_EQ(Bytes, 1u);
  ASSERT_KILN_OK(kiln_element_type_size(kiln_line(KILN_F64, 16), &Bytes));
  EXPECT_EQ(Bytes, 128u);
  // Minifloats are one byte a lane.
  ASSERT_KILN_OK(kiln_element_type_size(kiln_line(KILN_F8E4M3, 4), &Bytes));
  EXPECT_EQ(Bytes, 4u);
  ASSERT_KILN_OK(kiln_element_type_size(kiln_scalar(KILN_UE8M0), &Bytes));
  EXPECT_EQ(Bytes, 1u);

  EXPECT_EQ(kiln_element_type_size(kiln_line(KILN_F32, 5), &Bytes),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_element_type_size: type.lanes is 5, "
                                  "not one of 0, 1, 2, 3, 4, 8, 16");
  EXPECT_EQ(kiln_element_type_size(
                kiln_scalar(static_cast<kiln_scalar_type>(20)), &Bytes),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "kiln_element_type_size: type.scalar is 20, not a "
               "kiln_scalar_type");
  EXPECT_EQ(kiln_element_type_size(kiln_scalar(KILN_F32), nullptr),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_element_type_size: out_bytes is NULL");
}

//===-- Argument constructors ---------------------------------------------===//

template <typename T> T valueOf(const kiln_arg &A) {
  T V;
  std::memcpy(&V, A.value.bytes, sizeof(V));
  return V;
}

TEST(CAPIArgTest, ValueConstructors) {
  kiln_arg A = kiln_arg_f32(1.5f);
  EXPECT_EQ(A.kind, KILN_ARG_VALUE);
  EXPECT_EQ(A.value.type.scalar, KILN_F32);
  EXPECT_EQ(A.value.type.lanes, 0u);
  EXPECT_EQ(A.value.size, 4u);
  EXPECT_EQ(valueOf<float>(A), 1.5f);

  A = kiln_arg_f64(-2.25);
  EXPECT_EQ(A.value.type.scalar, KILN_F64);
  EXPECT_EQ(A.value.size, 8u);
  EXPECT_EQ(valueOf<double>(A), -2.25);

  A = kiln_arg_i32(-7);
  EXPECT_EQ(A.value.type.scalar, KILN_I32);
  EXPECT_EQ(valueOf<int32_t>(A), -7);

  A = kiln_arg_u32(0xdeadbeefu);
  EXPECT_EQ(A.value.type.scalar, KILN_U32);
  EXPECT_EQ(valueOf<uint32_t>(A), 0xdeadbeefu);

  A = kiln_arg_i64(-(int64_t(1) << 40));
  EXPECT_EQ(A.value.type.scalar, KILN_I64);
  EXPECT_EQ(valueOf<int64_t>(A), -(int64_t(1) << 40));

  A = kiln_arg_u64(uint64_t(1) << 63);
  EXPECT_EQ(A.value.type.scalar, KILN_U64);
  EXPECT_EQ(A.value.size, 8u);
  EXPECT_EQ(valueOf<uint64_t>(A), uint64_t(1) << 63);

  A = kiln_arg_bool(true);
  EXPECT_EQ(A.value.type.scalar, KILN_BOOL);
  EXPECT_EQ(A.value.size, 1u);
  EXPECT_EQ(A.value.bytes[0], 1);
  A = kiln_arg_bool(false);
  EXPECT_EQ(A.value.bytes[0], 0);
}

TEST(CAPIArgTest, ViewConstructors) {
  kiln_buffer B = nullptr;
  ASSERT_KILN_OK(kiln_buffer_allocate(64, &B));
  kiln_arg A =
      kiln_arg_view(B, kiln_line(KILN_F32, 4), 16, 2, KILN_ACCESS_READ);
  EXPECT_EQ(A.kind, KILN_ARG_BUFFER);
  EXPECT_EQ(A.view.buffer, B);
  EXPECT_EQ(A.view.byte_offset, 16u);
  EXPECT_EQ(A.view.count, 2u);
  EXPECT_EQ(A.view.type.scalar, KILN_F32);
  EXPECT_EQ(A.view.type.lanes, 4u);
  EXPECT_EQ(A.view.access, KILN_ACCESS_READ);

  A = kiln_arg_buffer(B, f32(), KILN_ACCESS_READ_WRITE);
  EXPECT_EQ(A.kind, KILN_ARG_BUFFER);
  EXPECT_EQ(A.view.byte_offset, 0u);
  EXPECT_EQ(A.view.count, KILN_WHOLE_BUFFER);
  EXPECT_EQ(A.view.access, KILN_ACCESS_READ_WRITE);
  EXPECT_KILN_OK(kiln_buffer_destroy(B));
}

TEST(CAPIArgTest, Value) {
  uint16_t Half[4] = {0x3c00, 0x4000, 0x4200, 0x4400}; // 1, 2, 3, 4 as f16
  kiln_arg A;
  ASSERT_KILN_OK(
      kiln_arg_value(kiln_line(KILN_F16, 4), Half, sizeof(Half), &A));
  EXPECT_EQ(A.kind, KILN_ARG_VALUE);
  EXPECT_EQ(A.value.type.scalar, KILN_F16);
  EXPECT_EQ(A.value.type.lanes, 4u);
  EXPECT_EQ(A.value.size, 8u);
  EXPECT_EQ(std::memcmp(A.value.bytes, Half, 8), 0);

  uint8_t Big[KILN_MAX_VALUE_BYTES + 1] = {};
  ASSERT_KILN_OK(
      kiln_arg_value(kiln_line(KILN_F64, 16), Big, KILN_MAX_VALUE_BYTES, &A));
  EXPECT_EQ(kiln_arg_value(kiln_line(KILN_F64, 16), Big, sizeof(Big), &A),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_arg_value: size is 129, more than 128");
  EXPECT_EQ(kiln_arg_value(f32(), nullptr, 4, &A), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "kiln_arg_value: bytes is NULL but size is 4");
  EXPECT_EQ(kiln_arg_value(f32(), Big, 4, nullptr),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_arg_value: out_arg is NULL");
}

//===-- Devices -----------------------------------------------------------===//

TEST(CAPIDeviceTest, ConfigInit) {
  kiln_device_config Config;
  std::memset(&Config, 0x5a, sizeof(Config));
  ASSERT_KILN_OK(kiln_device_config_init(&Config));
  EXPECT_EQ(Config.threads, 0u);
  EXPECT_EQ(Config.batch_threads, 0u);
  EXPECT_EQ(Config.opt_level, 3u);
  EXPECT_EQ(Config.cpu, nullptr);
  EXPECT_EQ(Config.features, nullptr);
  EXPECT_EQ(Config.store_dir, nullptr);
  EXPECT_EQ(Config.store_mode, KILN_STORE_ENVIRONMENT);
  EXPECT_EQ(Config.max_shared_bytes, 0u);
  EXPECT_EQ(Config.max_units_per_cube, 0u);
  // The C++ API's defaults (api::DeviceConfig), as documented in the header.
  EXPECT_EQ(Config.keep_warm_us, 2000u);
  EXPECT_EQ(Config.min_work_per_thread_us, 10u);
  const kiln::api::DeviceConfig Cpp;
  EXPECT_EQ(Config.opt_level, Cpp.OptLevel);
  EXPECT_EQ(Config.keep_warm_us, Cpp.KeepWarmMicroseconds);
  EXPECT_EQ(Config.min_work_per_thread_us, Cpp.MinWorkPerThreadMicroseconds);
  EXPECT_EQ(kiln_device_config_init(nullptr), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_device_config_init: config is NULL");
}

TEST(CAPIDeviceTest, CreateInfoDestroy) {
  kiln_device D = nullptr;
  ASSERT_KILN_OK(kiln_device_create(nullptr, &D)); // the defaults
  ASSERT_NE(D, nullptr);
  kiln_device_info Info;
  ASSERT_KILN_OK(kiln_device_get_info(D, &Info));
  EXPECT_GE(Info.concurrency, 1u);
  EXPECT_EQ(Info.loaded_kernel_count, 0u);
  EXPECT_KILN_OK(kiln_device_destroy(D));

  kiln_device_config Config;
  ASSERT_KILN_OK(kiln_device_config_init(&Config));
  Config.threads = 2;
  Config.opt_level = 1;
  Config.store_mode = KILN_STORE_OFF;
  Config.cpu = "";
  Config.features = "";
  ASSERT_KILN_OK(kiln_device_create(&Config, &D));
  ASSERT_KILN_OK(kiln_device_get_info(D, &Info));
  EXPECT_EQ(Info.concurrency, 2u);
  EXPECT_FALSE(Info.has_store);
  EXPECT_KILN_OK(kiln_device_destroy(D));

  // A zeroed configuration is valid (opt level 0).
  std::memset(&Config, 0, sizeof(Config));
  Config.store_mode = KILN_STORE_OFF;
  ASSERT_KILN_OK(kiln_device_create(&Config, &D));
  EXPECT_KILN_OK(kiln_device_destroy(D));
}

TEST(CAPIDeviceTest, CreateErrors) {
  kiln_device_config Config;
  ASSERT_KILN_OK(kiln_device_config_init(&Config));
  kiln_device D = reinterpret_cast<kiln_device>(uintptr_t(0x1234));
  Config.opt_level = 4;
  EXPECT_EQ(kiln_device_create(&Config, &D), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("optimisation level 4 is out of range 0..3"));
  EXPECT_EQ(D, nullptr); // a failed create writes NULL

  Config.opt_level = 3;
  setRaw(Config.store_mode, 7);
  EXPECT_EQ(kiln_device_create(&Config, &D), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_device_create: config->store_mode is "
                                  "7, not a kiln_store_mode");
  EXPECT_EQ(kiln_device_create(nullptr, nullptr), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_device_create: out_device is NULL");

  // Remote settings reach the C++ API: a bad address, a missing key.
  ASSERT_KILN_OK(kiln_device_config_init(&Config));
  EXPECT_EQ(Config.remote_store, nullptr);
  EXPECT_EQ(Config.remote_key_file, nullptr);
  EXPECT_FALSE(Config.remote_read_only);
  EXPECT_EQ(Config.remote_timeout_ms, 0u);
  Config.store_mode = KILN_STORE_OFF;
  Config.remote_store = "tcp://nowhere";
  Config.remote_key_file = "/tmp/kiln-no-such-folder/kiln-fleet-key";
  EXPECT_EQ(kiln_device_create(&Config, &D), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas(kiln::remoteTierBuilt()
                               ? "expected redis://"
                               : kiln::noRemoteTierMessage()));
  Config.remote_store = "unix:///tmp/kiln-no-such-folder/redis.sock";
  EXPECT_EQ(kiln_device_create(&Config, &D), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas(
      kiln::remoteTierBuilt()
          ? "fleet key file /tmp/kiln-no-such-folder/kiln-fleet-key"
          : kiln::noRemoteTierMessage()));
  Config.remote_store = "off";
  ASSERT_KILN_OK(kiln_device_create(&Config, &D));
  EXPECT_KILN_OK(kiln_device_destroy(D));
}

TEST(CAPIDeviceTest, AStoreThatCannotBeUsedIsAStoreError) {
  // A store folder under a regular file cannot be made.
  std::filesystem::path File =
      std::filesystem::temp_directory_path() /
      ("kiln-capi-not-a-folder-" + std::to_string(::getpid()));
  FILE *F = std::fopen(File.c_str(), "w");
  ASSERT_NE(F, nullptr);
  std::fclose(F);
  std::string DirText = (File / "store").string();
  kiln_device_config Config;
  ASSERT_KILN_OK(kiln_device_config_init(&Config));
  Config.store_dir = DirText.c_str();
  Config.store_mode = KILN_STORE_READ_WRITE;
  kiln_device D = reinterpret_cast<kiln_device>(uintptr_t(0x1234));
  EXPECT_EQ(kiln_device_create(&Config, &D), KILN_ERROR_STORE);
  EXPECT_EQ(D, nullptr);
  EXPECT_TRUE(lastErrorHas(DirText));
  // The environment's mode, or read-only, with the same folder: no store,
  // no error.
  for (kiln_store_mode Mode : {KILN_STORE_ENVIRONMENT, KILN_STORE_READ_ONLY}) {
    Config.store_mode = Mode;
    ASSERT_KILN_OK(kiln_device_create(&Config, &D));
    kiln_device_info Info;
    ASSERT_KILN_OK(kiln_device_get_info(D, &Info));
    EXPECT_FALSE(Info.has_store) << "store mode " << Mode;
    EXPECT_KILN_OK(kiln_device_destroy(D));
  }
  std::filesystem::remove(File);
}

/// Warnings reach the C callback with its user data, and are counted.
static void collectWarning(const char *Message, void *UserData) {
  static_cast<std::vector<std::string> *>(UserData)->push_back(Message);
}

TEST(CAPIDeviceTest, WarningsReachTheCallback) {
  // A store folder others can write to is not trusted: a warning.
  std::filesystem::path Root =
      std::filesystem::temp_directory_path() /
      ("kiln-capi-open-store-" + std::to_string(::getpid()));
  std::filesystem::remove_all(Root);
  std::filesystem::create_directories(Root);
  std::filesystem::permissions(Root, std::filesystem::perms::all);
  std::string RootText = Root.string();
  std::vector<std::string> Seen;
  kiln_device_config Config;
  ASSERT_KILN_OK(kiln_device_config_init(&Config));
  EXPECT_EQ(Config.warning_callback, nullptr);
  Config.store_dir = RootText.c_str();
  Config.warning_callback = collectWarning;
  Config.warning_user_data = &Seen;
  kiln_device D = nullptr;
  ASSERT_KILN_OK(kiln_device_create(&Config, &D));
  kiln_kernel K = loadKernel(D, VaddText, "vadd");
  ASSERT_NE(K, nullptr);
  kiln_device_info Info;
  ASSERT_KILN_OK(kiln_device_get_info(D, &Info));
  EXPECT_GE(Info.warning_count, 1u);
  ASSERT_FALSE(Seen.empty());
  EXPECT_NE(Seen.front().find("others can write"), std::string::npos)
      << Seen.front();
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  EXPECT_KILN_OK(kiln_device_destroy(D));
  std::filesystem::remove_all(Root);
}

/// The launch threading fields: every launch over every thread, workers
/// asleep at once; and every launch on the calling thread once measured.
TEST(CAPIDeviceTest, LaunchThreadingConfig) {
  const uint32_t MinWork[] = {0, UINT32_MAX};
  for (uint32_t Min : MinWork) {
    kiln_device_config Config;
    ASSERT_KILN_OK(kiln_device_config_init(&Config));
    Config.store_mode = KILN_STORE_OFF;
    Config.threads = 4;
    Config.keep_warm_us = 0;
    Config.min_work_per_thread_us = Min;
    kiln_device D = nullptr;
    ASSERT_KILN_OK(kiln_device_create(&Config, &D));
    kiln_kernel K = loadKernel(D, AffineText);
    kiln_stream S = nullptr;
    ASSERT_KILN_OK(kiln_stream_create(D, &S));
    const uint32_t N = 64 * 256;
    kiln_buffer Y = floatBuffer(std::vector<float>(N, 1.0f));
    kiln_arg Args[4] = {kiln_arg_buffer(Y, f32(), KILN_ACCESS_READ_WRITE),
                        kiln_arg_f32(1.0f), kiln_arg_f32(1.0f),
                        kiln_arg_u32(N)};
    // y = y + 1, three times without a stream and three times on one.
    for (int I = 0; I < 3; ++I)
      ASSERT_KILN_OK(kiln_device_launch(D, K, dim(N / 64), Args, 4));
    for (int I = 0; I < 3; ++I)
      ASSERT_KILN_OK(kiln_stream_launch(S, K, dim(N / 64), Args, 4));
    ASSERT_KILN_OK(kiln_stream_synchronize(S));
    std::vector<float> V = floatsOf(Y);
    for (uint32_t I = 0; I < N; ++I)
      ASSERT_EQ(V[I], 7.0f) << "at " << I << ", min_work_per_thread_us " << Min;
    EXPECT_KILN_OK(kiln_stream_destroy(S));
    EXPECT_KILN_OK(kiln_buffer_destroy(Y));
    EXPECT_KILN_OK(kiln_kernel_destroy(K));
    EXPECT_KILN_OK(kiln_device_destroy(D));
  }
}

TEST(CAPIDeviceTest, StoreModesAndOrigins) {
  std::filesystem::path Dir = std::filesystem::temp_directory_path() /
                              ("kiln-capi-store-" + std::to_string(::getpid()));
  std::filesystem::remove_all(Dir);
  std::string DirText = Dir.string();
  kiln_device_config Config;
  ASSERT_KILN_OK(kiln_device_config_init(&Config));
  Config.store_dir = DirText.c_str();
  Config.store_mode = KILN_STORE_READ_WRITE;

  // A cold store: compiled, and written.
  kiln_device D = nullptr;
  ASSERT_KILN_OK(kiln_device_create(&Config, &D));
  kiln_device_info Info;
  ASSERT_KILN_OK(kiln_device_get_info(D, &Info));
  EXPECT_TRUE(Info.has_store);
  kiln_kernel K = loadKernel(D, VaddText);
  kiln_kernel_info KI;
  ASSERT_KILN_OK(kiln_kernel_get_info(K, &KI));
  EXPECT_EQ(KI.origin, KILN_ORIGIN_COMPILED);
  // The same text again: a new handle on the kernel the first load made,
  // with its origin.
  kiln_kernel K2 = loadKernel(D, VaddText);
  EXPECT_NE(K2, K);
  ASSERT_KILN_OK(kiln_kernel_get_info(K2, &KI));
  EXPECT_EQ(KI.origin, KILN_ORIGIN_COMPILED);
  ASSERT_KILN_OK(kiln_device_get_info(D, &Info));
  EXPECT_EQ(Info.loaded_kernel_count, 1u);
  EXPECT_KILN_OK(kiln_kernel_destroy(K2));
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  EXPECT_KILN_OK(kiln_device_destroy(D));

  // A new device, read-only: served from the store.
  Config.store_mode = KILN_STORE_READ_ONLY;
  ASSERT_KILN_OK(kiln_device_create(&Config, &D));
  K = loadKernel(D, VaddText);
  ASSERT_KILN_OK(kiln_kernel_get_info(K, &KI));
  EXPECT_EQ(KI.origin, KILN_ORIGIN_STORE);
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  EXPECT_KILN_OK(kiln_device_destroy(D));
  std::filesystem::remove_all(Dir);
}

TEST(CAPIDeviceTest, SynchronousLaunch) {
  kiln_device D = memoryDevice();
  kiln_kernel K = loadKernel(D, VaddText);
  const uint32_t N = 1000;
  std::vector<float> A(N), B(N);
  for (uint32_t I = 0; I < N; ++I) {
    A[I] = float(I);
    B[I] = 0.25f * float(I) - 3.0f;
  }
  kiln_buffer BA = floatBuffer(A), BB = floatBuffer(B),
              BC = floatBuffer(std::vector<float>(N, -1.0f));
  kiln_arg Args[4] = {kiln_arg_buffer(BA, f32(), KILN_ACCESS_READ),
                      kiln_arg_buffer(BB, f32(), KILN_ACCESS_READ),
                      kiln_arg_buffer(BC, f32(), KILN_ACCESS_WRITE),
                      kiln_arg_u32(N)};
  ASSERT_KILN_OK(kiln_device_launch(D, K, dim((N + 63) / 64), Args, 4));
  std::vector<float> C = floatsOf(BC);
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(C[I], A[I] + B[I]) << "at " << I;
  // Nothing was queued on a stream: synchronize has nothing to report.
  EXPECT_KILN_OK(kiln_device_synchronize(D));
  for (kiln_buffer Buf : {BA, BB, BC})
    EXPECT_KILN_OK(kiln_buffer_destroy(Buf));
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  EXPECT_KILN_OK(kiln_device_destroy(D));
}

/// Launch errors, synchronous and on a stream: the same checks.
class CAPILaunchErrorTest : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override {
    D = memoryDevice();
    K = loadKernel(D, VaddText);
    ASSERT_KILN_OK(kiln_stream_create(D, &S));
    for (kiln_buffer &B : Bufs)
      B = floatBuffer(std::vector<float>(16, 1.0f));
  }
  void TearDown() override {
    for (kiln_buffer B : Bufs)
      EXPECT_KILN_OK(kiln_buffer_destroy(B));
    EXPECT_KILN_OK(kiln_stream_destroy(S));
    EXPECT_KILN_OK(kiln_kernel_destroy(K));
    EXPECT_KILN_OK(kiln_device_destroy(D));
  }
  const char *fn() const {
    return GetParam() ? "kiln_stream_launch" : "kiln_device_launch";
  }
  std::vector<kiln_arg> good() const {
    return {kiln_arg_buffer(Bufs[0], f32(), KILN_ACCESS_READ),
            kiln_arg_buffer(Bufs[1], f32(), KILN_ACCESS_READ),
            kiln_arg_buffer(Bufs[2], f32(), KILN_ACCESS_WRITE),
            kiln_arg_u32(16)};
  }
  kiln_status launch(const std::vector<kiln_arg> &Args) {
    return launchRaw(Args.data(), Args.size());
  }
  kiln_status launchRaw(const kiln_arg *Args, size_t Count) {
    kiln_status St = GetParam() ? kiln_stream_launch(S, K, dim(1), Args, Count)
                                : kiln_device_launch(D, K, dim(1), Args, Count);
    if (GetParam() && St == KILN_ERROR_INVALID_LAUNCH) {
      // An invalid launch fails the stream: clear it for the next case
      // (keeping the launch's message for the test).
      std::string Message = kiln_last_error();
      kiln_status Cleared = KILN_OK;
      EXPECT_KILN_OK(kiln_stream_reset_error(S, &Cleared));
      EXPECT_EQ(Cleared, KILN_ERROR_INVALID_LAUNCH);
      LastLaunchError = Message;
    } else {
      LastLaunchError = kiln_last_error();
    }
    return St;
  }
  bool saidAll(std::initializer_list<std::string> Parts) const {
    for (const std::string &P : Parts)
      if (LastLaunchError.find(P) == std::string::npos) {
        ADD_FAILURE() << "\"" << LastLaunchError << "\" lacks \"" << P << "\"";
        return false;
      }
    return true;
  }

  kiln_device D = nullptr;
  kiln_kernel K = nullptr;
  kiln_stream S = nullptr;
  kiln_buffer Bufs[3] = {};
  std::string LastLaunchError;
};

TEST_P(CAPILaunchErrorTest, KernelChecksNameTheParameter) {
  ASSERT_KILN_OK(launch(good()));
  if (GetParam())
    ASSERT_KILN_OK(kiln_stream_synchronize(S));

  std::vector<kiln_arg> Args = good();
  Args.pop_back();
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(saidAll({"launch of kernel 'vadd'", "3 arguments given",
                       "the kernel has 4 parameters"}));

  Args = good();
  Args[3] = kiln_arg_buffer(Bufs[0], f32(), KILN_ACCESS_READ);
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(saidAll({"argument 3 (%n)", "expected a value of type u32"}));

  Args = good();
  Args[3] = kiln_arg_f32(16.0f);
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(saidAll({"argument 3 (%n)", "u32"}));

  Args = good();
  Args[0] = kiln_arg_u32(1);
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(saidAll({"argument 0 (%a)", "buffer"}));

  // A read binding for a parameter the kernel writes.
  Args = good();
  Args[2].view.access = KILN_ACCESS_READ;
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(saidAll({"argument 2 (%c)"}));

  // A view of another element type.
  Args = good();
  Args[1] = kiln_arg_buffer(Bufs[1], kiln_scalar(KILN_I32), KILN_ACCESS_READ);
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(saidAll({"argument 1 (%b)"}));

  // A view that does not fit its buffer, one at a misaligned offset.
  Args = good();
  Args[0].view.count = 17;
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(saidAll({"argument 0 (%a)", "does not fit in its buffer of 64 "
                                          "bytes"}));
  Args = good();
  Args[0].view.byte_offset = 2;
  Args[0].view.count = 4;
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(saidAll({"argument 0 (%a)", "alignment"}));
  // A whole-buffer view from beyond the end.
  Args = good();
  Args[0].view.byte_offset = 68;
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(saidAll({"argument 0 (%a)", "does not fit"}));

  // A value of the right type but the wrong size.
  Args = good();
  Args[3].value.size = 2;
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(saidAll({"argument 3 (%n)"}));

  // A cube count with a zero (e.g. a C `{n}` initialiser) is a launch of
  // no cubes: it succeeds and runs nothing; its arguments are still checked.
  Args = good();
  kiln_status St =
      GetParam() ? kiln_stream_launch(S, K, kiln_dim3{4, 0, 0}, Args.data(), 4)
                 : kiln_device_launch(D, K, kiln_dim3{4, 0, 0}, Args.data(), 4);
  EXPECT_KILN_OK(St);
  Args[3].value.size = 2;
  St = GetParam() ? kiln_stream_launch(S, K, kiln_dim3{0, 1, 1}, Args.data(), 4)
                  : kiln_device_launch(D, K, kiln_dim3{0, 1, 1}, Args.data(), 4);
  EXPECT_EQ(St, KILN_ERROR_INVALID_LAUNCH);
  if (GetParam()) {
    EXPECT_EQ(kiln_stream_status(S), KILN_ERROR_INVALID_LAUNCH);
    ASSERT_KILN_OK(kiln_stream_reset_error(S, nullptr));
  }

  // Still good afterwards.
  EXPECT_KILN_OK(launch(good()));
}

TEST_P(CAPILaunchErrorTest, MalformedArgumentsAreInvalidArguments) {
  std::string F = fn();
  EXPECT_EQ(launchRaw(nullptr, 4), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(LastLaunchError, F + ": args is NULL but arg_count is 4");

  // More arguments than parameters, up to an absurd count: refused before
  // the array is read or anything is allocated (SIZE_MAX once reached
  // vector::reserve, an internal error). The stream is not failed.
  std::vector<kiln_arg> Five = good();
  Five.push_back(kiln_arg_u32(1));
  EXPECT_EQ(launch(Five), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(LastLaunchError,
            F + ": arg_count is 5, more than kernel 'vadd' has parameters (4)");
  EXPECT_EQ(launchRaw(Five.data(), SIZE_MAX), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(LastLaunchError,
            F + ": arg_count is " + std::to_string(SIZE_MAX) +
                ", more than kernel 'vadd' has parameters (4)");
  if (GetParam())
    EXPECT_KILN_OK(kiln_stream_status(S));
  EXPECT_KILN_OK(launch(good()));

  std::vector<kiln_arg> Args = good();
  std::memset(&Args[1], 0, sizeof(kiln_arg));
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(LastLaunchError,
            F + ": args[1].kind is 0, not KILN_ARG_BUFFER, KILN_ARG_VALUE, "
                "KILN_ARG_TENSOR, KILN_ARG_TENSOR_MAP or "
                "KILN_ARG_TENSOR_MAP_IM2COL (a zeroed kiln_arg, or a tensor "
                "made from something else?)");

  Args = good();
  Args[2].view.buffer = nullptr;
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(LastLaunchError, F + ": args[2].view.buffer is NULL");

  kiln_buffer Gone = floatBuffer(std::vector<float>(16));
  ASSERT_KILN_OK(kiln_buffer_destroy(Gone));
  Args = good();
  Args[0].view.buffer = Gone;
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(LastLaunchError, F + ": args[0].view.buffer handle was destroyed");

  Args = good();
  Args[0].view.buffer = reinterpret_cast<kiln_buffer>(S); // a stream
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(LastLaunchError, F + ": args[0].view.buffer is a kiln_stream "
                                 "handle, not a kiln_buffer");

  Args = good();
  Args[1].view.type.lanes = 7;
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(LastLaunchError, F + ": args[1].view.type.lanes is 7, not one of "
                                 "0, 1, 2, 3, 4, 8, 16");

  Args = good();
  setRaw(Args[1].view.access, 3);
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(LastLaunchError, F + ": args[1].view.access is 3, not a "
                                 "kiln_access");

  Args = good();
  setRaw(Args[3].value.type.scalar, 40);
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(LastLaunchError, F + ": args[3].value.type.scalar is 40, not a "
                                 "kiln_scalar_type");

  Args = good();
  Args[3].value.size = 129;
  EXPECT_EQ(launch(Args), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(LastLaunchError, F + ": args[3].value.size is 129, more than 128");

  // None of these failed the stream.
  if (GetParam())
    EXPECT_KILN_OK(kiln_stream_status(S));
  EXPECT_KILN_OK(launch(good()));
}

TEST_P(CAPILaunchErrorTest, KernelOfAnotherDevice) {
  kiln_device Other = memoryDevice();
  kiln_kernel OtherK = loadKernel(Other, VaddText);
  std::vector<kiln_arg> Args = good();
  kiln_status St = GetParam()
                       ? kiln_stream_launch(S, OtherK, dim(1), Args.data(), 4)
                       : kiln_device_launch(D, OtherK, dim(1), Args.data(), 4);
  EXPECT_EQ(St, KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("belongs to another device"));
  // On a stream it fails the stream, like any launch refused by the C++ API.
  if (GetParam()) {
    EXPECT_EQ(kiln_stream_status(S), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(kiln_last_error(),
                 "Stream::launch: kernel 'vadd' belongs to another device");
    kiln_status Cleared = KILN_OK;
    EXPECT_KILN_OK(kiln_stream_reset_error(S, &Cleared));
    EXPECT_EQ(Cleared, KILN_ERROR_INVALID_ARGUMENT);
  }
  EXPECT_KILN_OK(kiln_kernel_destroy(OtherK));
  EXPECT_KILN_OK(kiln_device_destroy(Other));
}

INSTANTIATE_TEST_SUITE_P(SyncAndStream, CAPILaunchErrorTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &I) {
                           return I.param ? "Stream" : "Device";
                         });

TEST(CAPIDeviceTest, DestroyDrainsThenCancels) {
  kiln_device D = memoryDevice();
  kiln_kernel K = loadKernel(D, AffineText);
  kiln_stream S = nullptr;
  ASSERT_KILN_OK(kiln_stream_create(D, &S));
  const uint32_t N = 4096;
  kiln_buffer Y = floatBuffer(std::vector<float>(N, 1.0f));
  // 50 launches of y = y + 1 queued, then the device destroyed at once.
  kiln_arg Args[4] = {kiln_arg_buffer(Y, f32(), KILN_ACCESS_READ_WRITE),
                      kiln_arg_f32(1.0f), kiln_arg_f32(1.0f), kiln_arg_u32(N)};
  for (int I = 0; I < 50; ++I)
    ASSERT_KILN_OK(kiln_stream_launch(S, K, dim(N / 64), Args, 4));
  ASSERT_KILN_OK(kiln_device_destroy(D));
  // Everything queued ran (1 + 50).
  std::vector<float> V = floatsOf(Y);
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(V[I], 51.0f) << "at " << I;

  // The handles on it stay valid handles but report the device gone.
  EXPECT_EQ(kiln_stream_launch(S, K, dim(N / 64), Args, 4),
            KILN_ERROR_CANCELLED);
  EXPECT_STREQ(kiln_last_error(), "the device was destroyed");
  float F = 0;
  EXPECT_EQ(kiln_stream_copy_to_buffer(S, Y, 0, &F, sizeof(F)),
            KILN_ERROR_CANCELLED);
  kiln_event E = nullptr;
  EXPECT_EQ(kiln_stream_record_event(S, &E), KILN_ERROR_CANCELLED);
  EXPECT_EQ(E, nullptr);
  kiln_kernel_info Info;
  EXPECT_KILN_OK(kiln_kernel_get_info(K, &Info)); // a handle still
  EXPECT_STREQ(Info.name, "affine");
  EXPECT_KILN_OK(kiln_stream_destroy(S));
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  EXPECT_KILN_OK(kiln_buffer_destroy(Y));
}

//===-- Kernels -----------------------------------------------------------===//

TEST(CAPIKernelTest, OptionsInit) {
  kiln_kernel_options O;
  std::memset(&O, 0x5a, sizeof(O));
  ASSERT_KILN_OK(kiln_kernel_options_init(&O));
  EXPECT_EQ(O.id, nullptr);
  EXPECT_EQ(O.file_name, nullptr);
  EXPECT_EQ(O.bounds_check, KILN_BOUNDS_CHECK_DEFAULT);
  EXPECT_EQ(kiln_kernel_options_init(nullptr), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_kernel_options_init: options is NULL");
}

TEST(CAPIKernelTest, LoadAndDescribe) {
  kiln_device D = memoryDevice();
  kiln_kernel_options O;
  ASSERT_KILN_OK(kiln_kernel_options_init(&O));
  O.id = "runtime.vadd.v1";
  O.file_name = "vadd.kiln";
  kiln_kernel K = nullptr;
  ASSERT_KILN_OK(kiln_device_load_kernel(D, VaddText, "vadd", &O, &K));
  kiln_kernel_info Info;
  ASSERT_KILN_OK(kiln_kernel_get_info(K, &Info));
  EXPECT_STREQ(Info.name, "vadd");
  EXPECT_STREQ(Info.id, "runtime.vadd.v1");
  EXPECT_EQ(Info.cube_dim.x, 64u);
  EXPECT_EQ(Info.cube_dim.y, 1u);
  EXPECT_EQ(Info.cube_dim.z, 1u);
  EXPECT_GE(Info.plane_dim, 1u);
  EXPECT_EQ(Info.parameter_count, 4u);
  EXPECT_EQ(Info.origin, KILN_ORIGIN_COMPILED);
  EXPECT_TRUE(Info.bounds_checked);

  const char *Names[4] = {"a", "b", "c", "n"};
  const kiln_access Accesses[3] = {KILN_ACCESS_READ, KILN_ACCESS_READ,
                                   KILN_ACCESS_WRITE};
  for (size_t I = 0; I < 4; ++I) {
    kiln_parameter_info P;
    ASSERT_KILN_OK(kiln_kernel_get_parameter(K, I, &P));
    EXPECT_STREQ(P.name, Names[I]);
    EXPECT_EQ(P.is_buffer, I < 3);
    EXPECT_EQ(P.type.scalar, I < 3 ? KILN_F32 : KILN_U32);
    EXPECT_EQ(P.type.lanes, 0u);
    if (I < 3) {
      EXPECT_EQ(P.access, Accesses[I]);
    }
  }
  kiln_parameter_info P;
  EXPECT_EQ(kiln_kernel_get_parameter(K, 4, &P), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_kernel_get_parameter: index 4 is out "
                                  "of range: kernel 'vadd' has 4 parameters");
  EXPECT_EQ(kiln_kernel_get_parameter(K, 0, nullptr),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "kiln_kernel_get_parameter: out_info is NULL");
  EXPECT_EQ(kiln_kernel_get_info(K, nullptr), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_kernel_get_info: out_info is NULL");

  kiln_device_info DI;
  ASSERT_KILN_OK(kiln_device_get_info(D, &DI));
  EXPECT_EQ(DI.loaded_kernel_count, 1u);
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  // Destroying the handle does not unload the kernel.
  ASSERT_KILN_OK(kiln_device_get_info(D, &DI));
  EXPECT_EQ(DI.loaded_kernel_count, 1u);
  EXPECT_KILN_OK(kiln_device_destroy(D));
}

TEST(CAPIKernelTest, NamesAndBoundsChecking) {
  kiln_device D = memoryDevice();
  std::string Two = std::string(VaddText) + AffineText;
  kiln_kernel K = nullptr;
  // The only kernel of a text needs no name; "@name" is accepted too.
  ASSERT_KILN_OK(kiln_device_load_kernel(D, VaddText, nullptr, nullptr, &K));
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  ASSERT_KILN_OK(kiln_device_load_kernel(D, VaddText, "", nullptr, &K));
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  ASSERT_KILN_OK(
      kiln_device_load_kernel(D, Two.c_str(), "@affine", nullptr, &K));
  kiln_kernel_info Info;
  ASSERT_KILN_OK(kiln_kernel_get_info(K, &Info));
  EXPECT_STREQ(Info.name, "affine");
  EXPECT_KILN_OK(kiln_kernel_destroy(K));

  // A name not in the text.
  K = reinterpret_cast<kiln_kernel>(uintptr_t(0x1234));
  EXPECT_EQ(kiln_device_load_kernel(D, Two.c_str(), "saxpy", nullptr, &K),
            KILN_ERROR_NOT_FOUND);
  EXPECT_STREQ(kiln_last_error(), "<input>: no kernel named @saxpy");
  EXPECT_EQ(K, nullptr);
  // No name for a text of two kernels.
  EXPECT_EQ(kiln_device_load_kernel(D, Two.c_str(), nullptr, nullptr, &K),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("holds 2 kernels; name the one to load"));

  kiln_kernel_options O;
  ASSERT_KILN_OK(kiln_kernel_options_init(&O));
  O.bounds_check = KILN_BOUNDS_CHECK_OFF;
  ASSERT_KILN_OK(kiln_device_load_kernel(D, VaddText, "vadd", &O, &K));
  ASSERT_KILN_OK(kiln_kernel_get_info(K, &Info));
  EXPECT_FALSE(Info.bounds_checked);
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  O.bounds_check = KILN_BOUNDS_CHECK_ON;
  ASSERT_KILN_OK(kiln_device_load_kernel(D, VaddText, "vadd", &O, &K));
  ASSERT_KILN_OK(kiln_kernel_get_info(K, &Info));
  EXPECT_TRUE(Info.bounds_checked);
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  setRaw(O.bounds_check, 3);
  EXPECT_EQ(kiln_device_load_kernel(D, VaddText, "vadd", &O, &K),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_device_load_kernel: "
                                  "options->bounds_check is 3, not a "
                                  "kiln_bounds_check");
  EXPECT_KILN_OK(kiln_device_destroy(D));
}

TEST(CAPIKernelTest, DiagnosticsReachTheLastError) {
  kiln_device D = memoryDevice();
  // Two verifier errors (lines 3 and 4), each located.
  const char *Bad = "kernel @bad cube_dim(64) (%a: buffer<f32, read>, %n: u32) "
                    "{\n"
                    "  %i = absolute_pos : u32\n"
                    "  %x = load %a[%i] : i32\n"
                    "  %y = add %n, %i : f32\n"
                    "}\n";
  kiln_kernel_options O;
  ASSERT_KILN_OK(kiln_kernel_options_init(&O));
  O.file_name = "bad.kiln";
  kiln_kernel K = nullptr;
  EXPECT_EQ(kiln_device_load_kernel(D, Bad, "bad", &O, &K),
            KILN_ERROR_INVALID_KERNEL);
  EXPECT_EQ(K, nullptr);
  std::string E = kiln_last_error();
  EXPECT_EQ(E.rfind("bad.kiln:3:", 0), 0u) << E; // the message starts there
  EXPECT_NE(E.find(": error: "), std::string::npos) << E;
  EXPECT_NE(E.find("\nbad.kiln:4:"), std::string::npos) << E;

  // A parse error, in the default file name.
  EXPECT_EQ(kiln_device_load_kernel(D,
                                    "kernel @p cube_dim(1) () {\n  %x = "
                                    "frobnicate : u32\n}\n",
                                    nullptr, nullptr, &K),
            KILN_ERROR_INVALID_KERNEL);
  E = kiln_last_error();
  EXPECT_EQ(E.rfind("<input>:2:", 0), 0u) << E;
  EXPECT_NE(E.find(": error: "), std::string::npos) << E;
  EXPECT_KILN_OK(kiln_device_destroy(D));
}

TEST(CAPIKernelTest, FindAndUnload) {
  kiln_device D = memoryDevice();
  kiln_kernel_options O;
  ASSERT_KILN_OK(kiln_kernel_options_init(&O));
  O.id = "rt.vadd";
  kiln_kernel K = nullptr;
  ASSERT_KILN_OK(kiln_device_load_kernel(D, VaddText, nullptr, &O, &K));

  kiln_kernel Found = nullptr;
  ASSERT_KILN_OK(
      kiln_device_find_kernel(D, "rt.vadd", KILN_BOUNDS_CHECK_DEFAULT, &Found));
  EXPECT_NE(Found, K); // a new handle on the same kernel
  kiln_kernel_info Info;
  ASSERT_KILN_OK(kiln_kernel_get_info(Found, &Info));
  EXPECT_STREQ(Info.id, "rt.vadd");
  // Loaded checked only.
  kiln_kernel None = reinterpret_cast<kiln_kernel>(uintptr_t(0x1234));
  EXPECT_EQ(kiln_device_find_kernel(D, "rt.vadd", KILN_BOUNDS_CHECK_OFF, &None),
            KILN_ERROR_NOT_FOUND);
  EXPECT_EQ(None, nullptr);
  EXPECT_EQ(kiln_device_find_kernel(D, "rt.nope", KILN_BOUNDS_CHECK_ON, &None),
            KILN_ERROR_NOT_FOUND);
  EXPECT_STREQ(kiln_last_error(), "no kernel loaded under the id 'rt.nope'");
  EXPECT_EQ(kiln_device_find_kernel(D, nullptr, KILN_BOUNDS_CHECK_ON, &None),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_device_find_kernel: id is NULL");
  // 3 is no kiln_bounds_check (9, out of the C++ enum's range, is tried
  // from C in HeaderC99.c).
  EXPECT_EQ(kiln_device_find_kernel(D, "rt.vadd",
                                    static_cast<kiln_bounds_check>(3), &None),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_device_find_kernel: bounds_check is 3, "
                                  "not a kiln_bounds_check");
  EXPECT_EQ(
      kiln_device_find_kernel(D, "rt.vadd", KILN_BOUNDS_CHECK_ON, nullptr),
      KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "kiln_device_find_kernel: out_kernel is NULL");

  // A kernel of another device is refused, and its handle left alone.
  kiln_device Other = memoryDevice();
  EXPECT_EQ(kiln_device_unload_kernel(Other, K), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("belongs to another device"));
  ASSERT_KILN_OK(kiln_kernel_get_info(K, &Info));
  EXPECT_KILN_OK(kiln_device_destroy(Other));

  // Unloading forgets the kernel and destroys the handle.
  ASSERT_KILN_OK(kiln_device_unload_kernel(D, K));
  EXPECT_EQ(kiln_kernel_get_info(K, &Info), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "kiln_kernel_get_info: kernel handle was destroyed");
  EXPECT_EQ(kiln_device_find_kernel(D, "rt.vadd", KILN_BOUNDS_CHECK_ON, &None),
            KILN_ERROR_NOT_FOUND);
  kiln_device_info DI;
  ASSERT_KILN_OK(kiln_device_get_info(D, &DI));
  EXPECT_EQ(DI.loaded_kernel_count, 0u);
  EXPECT_EQ(kiln_device_unload_kernel(D, K), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "kiln_device_unload_kernel: kernel handle was destroyed");

  // The other handle still holds the code: it launches.
  kiln_buffer B = floatBuffer({1, 2, 3, 4});
  kiln_arg Args[4] = {kiln_arg_buffer(B, f32(), KILN_ACCESS_READ),
                      kiln_arg_buffer(B, f32(), KILN_ACCESS_READ),
                      kiln_arg_buffer(B, f32(), KILN_ACCESS_READ_WRITE),
                      kiln_arg_u32(4)};
  ASSERT_KILN_OK(kiln_device_launch(D, Found, dim(1), Args, 4));
  EXPECT_EQ(floatsOf(B), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_KILN_OK(kiln_buffer_destroy(B));
  EXPECT_KILN_OK(kiln_kernel_destroy(Found));
  EXPECT_KILN_OK(kiln_device_destroy(D));
}

TEST(CAPIKernelTest, TheSameTextLoadedTwiceIsOneKernel) {
  kiln_device D = memoryDevice();
  kiln_kernel A = loadKernel(D, VaddText);
  kiln_kernel B = loadKernel(D, VaddText);
  EXPECT_NE(A, B); // two handles...
  kiln_kernel_info IA, IB;
  ASSERT_KILN_OK(kiln_kernel_get_info(A, &IA));
  ASSERT_KILN_OK(kiln_kernel_get_info(B, &IB));
  EXPECT_STREQ(IA.id, IB.id); // ...on one kernel
  std::string Id = IA.id;
  kiln_device_info DI;
  ASSERT_KILN_OK(kiln_device_get_info(D, &DI));
  EXPECT_EQ(DI.loaded_kernel_count, 1u);
  // Unloading through one handle forgets it for both.
  ASSERT_KILN_OK(kiln_device_unload_kernel(D, A));
  kiln_kernel None = nullptr;
  EXPECT_EQ(
      kiln_device_find_kernel(D, Id.c_str(), KILN_BOUNDS_CHECK_DEFAULT, &None),
      KILN_ERROR_NOT_FOUND);
  ASSERT_KILN_OK(kiln_device_get_info(D, &DI));
  EXPECT_EQ(DI.loaded_kernel_count, 0u);
  // The other handle still launches.
  kiln_buffer Buf = floatBuffer({1, 2, 3, 4});
  kiln_arg Args[4] = {kiln_arg_buffer(Buf, f32(), KILN_ACCESS_READ),
                      kiln_arg_buffer(Buf, f32(), KILN_ACCESS_READ),
                      kiln_arg_buffer(Buf, f32(), KILN_ACCESS_READ_WRITE),
                      kiln_arg_u32(4)};
  ASSERT_KILN_OK(kiln_device_launch(D, B, dim(1), Args, 4));
  EXPECT_EQ(floatsOf(Buf), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_KILN_OK(kiln_buffer_destroy(Buf));
  EXPECT_KILN_OK(kiln_kernel_destroy(B));
  EXPECT_KILN_OK(kiln_device_destroy(D));
}

//===-- Buffers -----------------------------------------------------------===//

TEST(CAPIBufferTest, Allocate) {
  kiln_buffer B = nullptr;
  ASSERT_KILN_OK(kiln_buffer_allocate(100, &B));
  void *Data = nullptr;
  uint64_t Size = 0;
  ASSERT_KILN_OK(kiln_buffer_data(B, &Data));
  ASSERT_KILN_OK(kiln_buffer_size(B, &Size));
  EXPECT_EQ(Size, 100u);
  ASSERT_NE(Data, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(Data) % 64, 0u);
  for (int I = 0; I < 100; ++I)
    ASSERT_EQ(static_cast<unsigned char *>(Data)[I], 0) << "at " << I;
  EXPECT_KILN_OK(kiln_buffer_destroy(B));

  ASSERT_KILN_OK(kiln_buffer_allocate(0, &B)); // valid and empty
  ASSERT_KILN_OK(kiln_buffer_size(B, &Size));
  EXPECT_EQ(Size, 0u);
  EXPECT_KILN_OK(kiln_buffer_destroy(B));

  B = reinterpret_cast<kiln_buffer>(uintptr_t(0x1234));
  EXPECT_EQ(kiln_buffer_allocate(uint64_t(1) << 62, &B),
            KILN_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(kiln_last_error()), "");
  EXPECT_EQ(B, nullptr);
  EXPECT_EQ(kiln_buffer_allocate(8, nullptr), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_buffer_allocate: out_buffer is NULL");
}

TEST(CAPIBufferTest, Wrap) {
  alignas(16) float Mine[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  kiln_buffer B = nullptr;
  ASSERT_KILN_OK(kiln_buffer_wrap(Mine, sizeof(Mine), &B));
  void *Data = nullptr;
  uint64_t Size = 0;
  ASSERT_KILN_OK(kiln_buffer_data(B, &Data));
  ASSERT_KILN_OK(kiln_buffer_size(B, &Size));
  EXPECT_EQ(Data, Mine);
  EXPECT_EQ(Size, sizeof(Mine));

  // A launch writes the caller's memory in place.
  kiln_device D = memoryDevice();
  kiln_kernel K = loadKernel(D, AffineText);
  kiln_arg Args[4] = {kiln_arg_buffer(B, f32(), KILN_ACCESS_READ_WRITE),
                      kiln_arg_f32(2.0f), kiln_arg_f32(1.0f), kiln_arg_u32(8)};
  ASSERT_KILN_OK(kiln_device_launch(D, K, dim(1), Args, 4));
  for (int I = 0; I < 8; ++I)
    EXPECT_EQ(Mine[I], 2.0f * float(I + 1) + 1.0f);
  EXPECT_KILN_OK(kiln_buffer_destroy(B)); // never frees Mine
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  EXPECT_KILN_OK(kiln_device_destroy(D));

  ASSERT_KILN_OK(kiln_buffer_wrap(nullptr, 0, &B));
  EXPECT_KILN_OK(kiln_buffer_destroy(B));
  B = reinterpret_cast<kiln_buffer>(uintptr_t(0x1234));
  EXPECT_EQ(kiln_buffer_wrap(nullptr, 8, &B), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_buffer_wrap: data is NULL but size is "
                                  "8");
  EXPECT_EQ(B, nullptr);
  EXPECT_EQ(kiln_buffer_wrap(Mine, 8, nullptr), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_buffer_wrap: out_buffer is NULL");
}

TEST(CAPIBufferTest, DataAndSizeNeedTheirOutParameters) {
  kiln_buffer B = nullptr;
  ASSERT_KILN_OK(kiln_buffer_allocate(8, &B));
  EXPECT_EQ(kiln_buffer_data(B, nullptr), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_buffer_data: out_data is NULL");
  EXPECT_EQ(kiln_buffer_size(B, nullptr), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_buffer_size: out_size is NULL");
  EXPECT_KILN_OK(kiln_buffer_destroy(B));
}

TEST(CAPIDeviceTest, ThreadLimitAndTargetOptions) {
  kiln_device_config Config;
  ASSERT_KILN_OK(kiln_device_config_init(&Config));
  Config.store_mode = KILN_STORE_OFF;
  kiln_device D = nullptr;
  Config.threads = KILN_MAX_THREADS;
  ASSERT_KILN_OK(kiln_device_create(&Config, &D));
  EXPECT_KILN_OK(kiln_device_destroy(D));

  Config.threads = KILN_MAX_THREADS + 1;
  EXPECT_EQ(kiln_device_create(&Config, &D), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_device_create: config->threads is "
                                  "4097, above the limit of 4096 (0: all "
                                  "cores)");
  EXPECT_EQ(D, nullptr);
  Config.threads = UINT32_MAX;
  EXPECT_EQ(kiln_device_create(&Config, &D), KILN_ERROR_INVALID_ARGUMENT);
  Config.threads = 0;
  Config.batch_threads = 65537;
  EXPECT_EQ(kiln_device_create(&Config, &D), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("config->batch_threads is 65537, above the limit"));

  Config.batch_threads = 0;
  Config.features = "-64bit";
  EXPECT_EQ(kiln_device_create(&Config, &D), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("target features '-64bit' turn off 64bit"));
  Config.features = nullptr;
  Config.cpu = "pentium4";
  EXPECT_EQ(kiln_device_create(&Config, &D), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("CPU 'pentium4' is not an x86-64 CPU"));
  Config.cpu = "no-such-cpu";
  EXPECT_EQ(kiln_device_create(&Config, &D), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("unknown CPU 'no-such-cpu'"));
}

} // namespace

//===- LaunchTest.cpp - Launch validation and the TBB executor ------------===//

#include "../CPU/IRObject.h"

#include "kiln/CPU/JITLinker.h"
#include "kiln/Runtime/Launch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>

using namespace kiln;

namespace {

const Type F32 = Type::scalar(ScalarKind::F32);
const Type U32 = Type::scalar(ScalarKind::U32);
const Type U64 = Type::scalar(ScalarKind::U64);

CubeMetadata vaddMetadata() {
  CubeMetadata M;
  M.KernelName = "vadd";
  M.Symbol = "kiln_cube_vadd";
  M.CubeDim = {64, 1, 1};
  M.Params = {{"a", true, F32, AccessKind::Read},
              {"b", true, F32, AccessKind::Read},
              {"c", true, F32, AccessKind::Write},
              {"n", false, U32, AccessKind::ReadWrite}};
  return M;
}

std::string errorOf(llvm::Error E) {
  return E ? llvm::toString(std::move(E)) : std::string("<no error>");
}

struct Fixture : ::testing::Test {
  std::unique_ptr<JITLinker> Linker;
  void SetUp() override {
    auto L = JITLinker::create();
    ASSERT_TRUE(!!L) << llvm::toString(L.takeError());
    Linker = std::move(*L);
  }
  LoadedKernel load(llvm::StringRef IR, const CubeMetadata &M) {
    auto K = Linker->load(test::compileIR(IR), M);
    EXPECT_TRUE(!!K) << llvm::toString(K.takeError());
    return K ? *K : LoadedKernel();
  }
};

TEST(Launch, ValidationErrorsNameTheParameter) {
  CubeMetadata M = vaddMetadata();
  HostBuffer A = std::move(*HostBuffer::create(F32, 8));
  HostBuffer B = std::move(*HostBuffer::create(F32, 8));
  HostBuffer C = std::move(*HostBuffer::create(F32, 8));
  HostBuffer I =
      std::move(*HostBuffer::create(Type::scalar(ScalarKind::I32), 8));
  std::array<uint32_t, 3> One = {1, 1, 1};
  auto Good = [&] {
    return std::vector<ArgBinding>{ArgBinding::buffer(A), ArgBinding::buffer(B),
                                   ArgBinding::buffer(C), ArgBinding::u32(8)};
  };
  EXPECT_EQ(errorOf(validateLaunch(M, One, Good())), "<no error>");

  auto Args = Good();
  Args.pop_back();
  EXPECT_NE(errorOf(validateLaunch(M, One, Args))
                .find("launch of kernel 'vadd': 3 arguments given, the kernel "
                      "has 4 parameters"),
            std::string::npos);
  Args = Good();
  Args[3] = ArgBinding::buffer(C);
  EXPECT_NE(errorOf(validateLaunch(M, One, Args))
                .find("argument 3 (%n): expected a value of type u32, got a "
                      "buffer of f32"),
            std::string::npos);
  Args = Good();
  Args[0] = ArgBinding::f32(1.0f);
  EXPECT_NE(errorOf(validateLaunch(M, One, Args))
                .find("argument 0 (%a): expected a read buffer of f32, got a "
                      "value of type f32"),
            std::string::npos);
  Args = Good();
  Args[1] = ArgBinding::buffer(I);
  EXPECT_NE(errorOf(validateLaunch(M, One, Args))
                .find("argument 1 (%b): expected a read buffer of f32, got a "
                      "buffer of i32"),
            std::string::npos);
  Args = Good();
  Args[3] = ArgBinding::u64(8);
  EXPECT_NE(
      errorOf(validateLaunch(M, One, Args))
          .find("(%n): expected a value of type u32, got a value of type u64"),
      std::string::npos);
  Args = Good();
  uint16_t Short = 8;
  Args[3] = ArgBinding::value(U32, &Short, 2);
  EXPECT_NE(errorOf(validateLaunch(M, One, Args))
                .find("(%n): a value of type u32 has 4 bytes, 2 given"),
            std::string::npos);
  Args = Good();
  Args[2] = ArgBinding::buffer(C, AccessKind::Read);
  EXPECT_NE(
      errorOf(validateLaunch(M, One, Args)).find("(%c): a read-only buffer"),
      std::string::npos);
  Args = Good();
  Args[0] = ArgBinding::buffer(A, AccessKind::Write);
  EXPECT_NE(
      errorOf(validateLaunch(M, One, Args)).find("(%a): a write-only buffer"),
      std::string::npos);
  Args = Good();
  Args[0] = ArgBinding::buffer(nullptr, F32, 0);
  EXPECT_NE(errorOf(validateLaunch(M, One, Args))
                .find("(%a): the buffer's address is null"),
            std::string::npos);
  Args = Good();
  Args[0] = ArgBinding::buffer(A.as<char>() + 4, F32, 4);
  EXPECT_NE(errorOf(validateLaunch(M, One, Args, 64))
                .find("(%a): the buffer is not aligned to 64 bytes"),
            std::string::npos);
  EXPECT_EQ(errorOf(validateLaunch(M, One, Args, 4)), "<no error>");

  // A zero in any dimension: a valid launch of no cubes.
  EXPECT_EQ(errorOf(validateLaunch(M, {4, 0, 1}, Good())), "<no error>");
  EXPECT_EQ(errorOf(validateLaunch(M, {0, 0, 0}, Good())), "<no error>");
  EXPECT_NE(errorOf(validateLaunch(M, {65536, 65536, 1}, Good()))
                .find("more than 2^32-1 cubes"),
            std::string::npos);
  EXPECT_NE(errorOf(validateLaunch(M, {65536, 2, 32768}, Good()))
                .find("more than 2^32-1 cubes"),
            std::string::npos);
  // 2^32-1 cubes are accepted as a count, but their units must fit u32
  // positions too: 64-unit cubes allow at most 2^26 of them.
  EXPECT_NE(errorOf(validateLaunch(M, {65535, 65537, 1}, Good()))
                .find("more than 2^32 units"),
            std::string::npos);
  EXPECT_EQ(errorOf(validateLaunch(M, {1u << 26, 1, 1}, Good())),
            "<no error>");
  EXPECT_EQ(errorOf(validateLaunch(M, {1u << 13, 1u << 13, 1}, Good())),
            "<no error>");
  EXPECT_NE(errorOf(validateLaunch(M, {(1u << 26) + 1, 1, 1}, Good()))
                .find("makes absolute positions past u32"),
            std::string::npos);
}

TEST(Launch, EmptyHandleIsAnError) {
  Executor E(1);
  EXPECT_NE(
      errorOf(E.launch(LoadedKernel(), {1, 1, 1}, {})).find("empty kernel"),
      std::string::npos);
}

using LaunchRun = Fixture;

TEST_F(LaunchRun, VaddOverManyCubesWithATail) {
  LoadedKernel K = load(test::vaddIR("kiln_cube_vadd"), vaddMetadata());
  ASSERT_TRUE(K.valid());
  const uint32_t N = 64 * 1000 - 13;
  const uint32_t Cubes = (N + 63) / 64;
  for (unsigned Threads : {1u, 2u, 0u}) {
    Executor E(Threads);
    HostBuffer A = std::move(*HostBuffer::create(F32, N));
    HostBuffer B = std::move(*HostBuffer::create(F32, N));
    HostBuffer C = std::move(*HostBuffer::create(F32, N + 64));
    for (uint32_t I = 0; I < N; ++I) {
      A.as<float>()[I] = float(I);
      B.as<float>()[I] = 0.5f;
    }
    ArgBinding Args[] = {ArgBinding::buffer(A, AccessKind::Read),
                         ArgBinding::buffer(B), ArgBinding::buffer(C),
                         ArgBinding::u32(N)};
    ASSERT_EQ(errorOf(E.launch(K, {Cubes, 1, 1}, Args)), "<no error>");
    for (uint32_t I = 0; I < N; ++I)
      ASSERT_EQ(C.as<float>()[I], float(I) + 0.5f)
          << I << " threads " << Threads;
    for (uint32_t I = N; I < N + 64; ++I)
      ASSERT_EQ(C.as<float>()[I], 0.0f) << "past the tail: " << I;
  }
}

/// Records, for each cube, the scratch address it ran with; counts calls and
/// cubes; writes the whole scratch area.
const char *RecordIR = R"(
%KernelArg = type { ptr, i64 }
define void @kiln_cube_rec(ptr %la, i32 %begin, i32 %end, ptr %scratch) {
entry:
  %args = load ptr, ptr %la
  %out = load ptr, ptr %args
  %p1 = getelementptr %KernelArg, ptr %args, i64 1, i32 0
  %cnt = load ptr, ptr %p1
  %old = atomicrmw add ptr %cnt, i64 1 seq_cst
  %cubes = getelementptr i64, ptr %cnt, i64 1
  %n = sub i32 %end, %begin
  %n64 = zext i32 %n to i64
  %old2 = atomicrmw add ptr %cubes, i64 %n64 seq_cst
  %last = getelementptr i8, ptr %scratch, i64 4095
  store i8 1, ptr %last
  store i8 1, ptr %scratch
  %addr = ptrtoint ptr %scratch to i64
  br label %loop
loop:
  %c = phi i32 [ %begin, %entry ], [ %cn, %loop ]
  %c64 = zext i32 %c to i64
  %slot = getelementptr i64, ptr %out, i64 %c64
  store i64 %addr, ptr %slot
  %cn = add i32 %c, 1
  %more = icmp ult i32 %cn, %end
  br i1 %more, label %loop, label %done
done:
  ret void
}
)";

CubeMetadata recordMetadata() {
  CubeMetadata M;
  M.KernelName = "rec";
  M.Symbol = "kiln_cube_rec";
  M.ScratchBytes = 4096;
  M.Params = {{"out", true, U64, AccessKind::Write},
              {"count", true, U64, AccessKind::ReadWrite}};
  return M;
}

TEST_F(LaunchRun, RangesOfCubesAndScratchReuse) {
  LoadedKernel K = load(RecordIR, recordMetadata());
  ASSERT_TRUE(K.valid());
  // Every launch over both threads (no least work per thread): the cubes of
  // this kernel are cheap enough that the measured-work policy would run
  // later launches on the calling thread, with an arena of its own.
  Executor E(2, Executor::DefaultKeepWarmMicroseconds,
             /*MinWorkPerThreadMicroseconds=*/0);
  const uint32_t X = 100, Y = 30, Z = 7, Total = X * Y * Z;
  HostBuffer Out = std::move(*HostBuffer::create(U64, Total));
  HostBuffer Count = std::move(*HostBuffer::create(U64, 2));
  ArgBinding Args[] = {ArgBinding::buffer(Out), ArgBinding::buffer(Count)};
  ASSERT_EQ(errorOf(E.launch(K, {X, Y, Z}, Args)), "<no error>");
  uint64_t Calls = Count.as<uint64_t>()[0];
  EXPECT_EQ(Count.as<uint64_t>()[1], Total); // every cube ran exactly once
  EXPECT_GE(Calls, 2u);                      // spread over ranges
  // One call per range (about 8 per thread), never one per cube.
  EXPECT_LE(Calls, 16u * E.concurrency() + 1);
  std::set<uint64_t> Scratches(Out.as<uint64_t>(), Out.as<uint64_t>() + Total);
  for (uint64_t S : Scratches)
    EXPECT_EQ(S % 64, 0u);

  // Later launches reuse the arenas: whichever workers take part, there is
  // at most one arena per worker, however many launches run.
  for (int Round = 0; Round < 20; ++Round) {
    Count.as<uint64_t>()[1] = 0;
    ASSERT_EQ(errorOf(E.launch(K, {X, Y, Z}, Args)), "<no error>");
    ASSERT_EQ(Count.as<uint64_t>()[1], Total);
    Scratches.insert(Out.as<uint64_t>(), Out.as<uint64_t>() + Total);
  }
  EXPECT_LE(Scratches.size(), E.concurrency());
  EXPECT_LE(E.scratchAllocations(), E.concurrency());
  EXPECT_GE(E.scratchAllocations(), 1u);
}

// The measured-work policy: a kernel's first launch uses every thread; once
// its cost per cube is known, a launch worth less than the least work per
// thread runs on the calling thread, in one call of the cube function.
TEST_F(LaunchRun, LaunchesUseTheThreadsTheirWorkIsWorth) {
  LoadedKernel K = load(RecordIR, recordMetadata());
  ASSERT_TRUE(K.valid());
  Executor E(2, 0, /*MinWorkPerThreadMicroseconds=*/UINT32_MAX);
  const uint32_t Total = 100 * 30;
  HostBuffer Out = std::move(*HostBuffer::create(U64, Total));
  HostBuffer Count = std::move(*HostBuffer::create(U64, 2));
  ArgBinding Args[] = {ArgBinding::buffer(Out), ArgBinding::buffer(Count)};
  ASSERT_EQ(errorOf(E.launch(K, {100, 30, 1}, Args)), "<no error>");
  EXPECT_GE(Count.as<uint64_t>()[0], 2u) << "the first launch is spread";
  ASSERT_NE(K.profile(), nullptr);
  EXPECT_GT(K.profile()->PicosPerCube.load(), 0u);
  for (int Round = 0; Round < 5; ++Round) {
    Count.as<uint64_t>()[0] = Count.as<uint64_t>()[1] = 0;
    ASSERT_EQ(errorOf(E.launch(K, {100, 30, 1}, Args)), "<no error>");
    EXPECT_EQ(Count.as<uint64_t>()[0], 1u) << "one inline call";
    EXPECT_EQ(Count.as<uint64_t>()[1], Total);
  }
}

TEST_F(LaunchRun, OneCubeRunsInlineAndIsCheap) {
  LoadedKernel K = load(RecordIR, recordMetadata());
  ASSERT_TRUE(K.valid());
  Executor E(2);
  HostBuffer Out = std::move(*HostBuffer::create(U64, 1));
  HostBuffer Count = std::move(*HostBuffer::create(U64, 2));
  ArgBinding Args[] = {ArgBinding::buffer(Out), ArgBinding::buffer(Count)};
  const int Rounds = 2000;
  auto Start = std::chrono::steady_clock::now();
  for (int I = 0; I < Rounds; ++I)
    ASSERT_FALSE(E.launch(K, {1, 1, 1}, Args));
  double Us = std::chrono::duration<double, std::micro>(
                  std::chrono::steady_clock::now() - Start)
                  .count() /
              Rounds;
  EXPECT_EQ(Count.as<uint64_t>()[0], uint64_t(Rounds));
  EXPECT_EQ(E.scratchAllocations(), 1u); // always the calling thread's
  EXPECT_LT(Us, 50.0) << "a one-cube launch took " << Us << " us";
  std::printf("one-cube launch: %.2f us\n", Us);
}

} // namespace

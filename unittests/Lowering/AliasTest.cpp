//===- AliasTest.cpp - The MayAlias variant: overlapping buffer bindings --===//
//
// Kernels run with one memory bound to several buffer parameters, compiled
// as CpuVariant::MayAlias, unoptimised and through the backend's O3 pipeline,
// against a scalar reference. Each unit's own accesses must keep their
// program order across parameters (docs/Lowering.md §7); nothing here
// depends on units seeing each other's accesses without a barrier.
//
//===----------------------------------------------------------------------===//

#include "LoweringHarness.h"

#include "kiln/CPU/CodeGen.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <vector>

using namespace kiln;
using namespace kiln::test;

namespace {

/// The MayAlias variants a runtime may pick. The alignment is the element
/// size: overlapping views of a pool need not be aligned any further.
std::vector<CpuVariant> aliasVariants() {
  std::vector<CpuVariant> Out;
  for (bool Checked : {true, false})
    Out.push_back(CpuVariant{Checked, 4, /*MayAlias=*/true});
  return Out;
}

/// Compiles \p Text for every MayAlias variant, unoptimised and at O3, and
/// calls \p Run with each kernel.
template <class F> void forEachAliasBuild(const char *Text, F Run) {
  for (const CpuVariant &V : aliasVariants())
    for (bool O3 : {false, true}) {
      SCOPED_TRACE(V.str() + (O3 ? " O3" : " unoptimised"));
      JitKernel K = compile(Text, V, {}, O3);
      ASSERT_TRUE(K.Fn);
      Run(K);
    }
}

constexpr uint32_t N = 1000; // not a multiple of the cube size
constexpr std::array<uint32_t, 3> Cubes = {(N + 63) / 64, 1, 1};

TEST(LoweringAlias, SameBufferReadAndWritten) {
  // out[i] = in[i] * 2 + 1 with out and in one memory.
  const char *Text = R"(
kernel @scale cube_dim(64) (%in: buffer<f32, read>, %out: buffer<f32, write>,
                            %n: u32) {
  %i = absolute_pos : u32
  %ok = lt %i, %n : bool
  if %ok {
    %x = load %in[%i] : f32
    %y = mul %x, 2.0:f32 : f32
    %z = add %y, 1.0:f32 : f32
    store %out[%i], %z
  }
}
)";
  forEachAliasBuild(Text, [](const JitKernel &K) {
    for (bool PerCube : {false, true}) {
      std::vector<float> Data(N + 8, -5.0f);
      for (uint32_t I = 0; I < N; ++I)
        Data[I] = float(I) * 0.25f - 100.0f;
      std::vector<float> Want = Data;
      for (uint32_t I = 0; I < N; ++I)
        Want[I] = Want[I] * 2.0f + 1.0f;
      uint32_t Count = N;
      KernelArg View{Data.data(), N};
      K.launch({View, View, val(Count)}, Cubes, PerCube);
      for (uint32_t I = 0; I < N + 8; ++I)
        ASSERT_EQ(Data[I], Want[I]) << I;
    }
  });
}

TEST(LoweringAlias, UnitSeesItsOwnStoreThroughAnotherParameter) {
  // With %a and %b one memory: a[i] = 3i+7, then b[i] must read 3i+7; then
  // b[i] = a[i] + 5, and a[i] must read 3i+12. With per-buffer no-alias
  // scopes O3 forwards the first load of a[i] to the second.
  const char *Text = R"(
kernel @order cube_dim(64) (%a: buffer<u32, read_write>,
                            %b: buffer<u32, read_write>,
                            %o: buffer<u32, write>, %n: u32) {
  %i = absolute_pos : u32
  %ok = lt %i, %n : bool
  if %ok {
    %v0 = mul %i, 3:u32 : u32
    %v = add %v0, 7:u32 : u32
    store %a[%i], %v
    %x = load %b[%i] : u32
    %p = load %a[%i] : u32
    %p5 = add %p, 5:u32 : u32
    store %b[%i], %p5
    %q = load %a[%i] : u32
    %j = mul %i, 2:u32 : u32
    store %o[%j], %x
    %j1 = add %j, 1:u32 : u32
    store %o[%j1], %q
  }
}
)";
  forEachAliasBuild(Text, [](const JitKernel &K) {
    std::vector<uint32_t> Data(N, 0xdeadu), Out(2 * N, 0);
    uint32_t Count = N;
    KernelArg View{Data.data(), N};
    K.launch({View, View, buf(Out), val(Count)}, Cubes);
    for (uint32_t I = 0; I < N; ++I) {
      ASSERT_EQ(Out[2 * I], 3 * I + 7) << "b[i] after a[i] = ..., unit " << I;
      ASSERT_EQ(Out[2 * I + 1], 3 * I + 12)
          << "a[i] after b[i] = ..., unit " << I;
      ASSERT_EQ(Data[I], 3 * I + 12) << I;
    }
  });
}

TEST(LoweringAlias, StridedStoresStayBeforeALoadOfTheirElement) {
  // a[2i] = i + 1000; x = b[2i]; a[2i+1] = x + 1, with %a and %b one
  // memory. The two stores of a unit form an interleaved group for the
  // vectoriser, which writes the group where its last member is: that must
  // not move the store to a[2i] after the load of b[2i].
  const char *Text = R"(
kernel @strided cube_dim(64) (%a: buffer<u32, write>, %b: buffer<u32, read>,
                              %n: u32) {
  %i = absolute_pos : u32
  %ok = lt %i, %n : bool
  if %ok {
    %j = mul %i, 2:u32 : u32
    %v = add %i, 1000:u32 : u32
    store %a[%j], %v
    %x = load %b[%j] : u32
    %x1 = add %x, 1:u32 : u32
    %j1 = add %j, 1:u32 : u32
    store %a[%j1], %x1
  }
}
)";
  forEachAliasBuild(Text, [](const JitKernel &K) {
    std::vector<uint32_t> Data(2 * N, 7);
    uint32_t Count = N;
    KernelArg View{Data.data(), 2 * N};
    K.launch({View, View, val(Count)}, Cubes);
    for (uint32_t I = 0; I < N; ++I) {
      ASSERT_EQ(Data[2 * I], I + 1000) << I;
      ASSERT_EQ(Data[2 * I + 1], I + 1001) << I;
    }
  });
}

TEST(LoweringAlias, InPlaceAdd) {
  // c = a + c with %b and %c one memory.
  const char *Text = R"(
kernel @vadd cube_dim(64) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                           %c: buffer<f32, write>, %n: u32) {
  %i = absolute_pos : u32
  %ok = lt %i, %n : bool
  if %ok {
    %x = load %a[%i] : f32
    %y = load %b[%i] : f32
    %s = add %x, %y : f32
    store %c[%i], %s
  }
}
)";
  forEachAliasBuild(Text, [](const JitKernel &K) {
    for (bool PerCube : {false, true}) {
      std::vector<float> A(N), C(N);
      for (uint32_t I = 0; I < N; ++I) {
        A[I] = float(I) * 0.5f;
        C[I] = 3.0f - float(I);
      }
      std::vector<float> Want(N);
      for (uint32_t I = 0; I < N; ++I)
        Want[I] = A[I] + C[I];
      uint32_t Count = N;
      K.launch({buf(A), buf(C), buf(C), val(Count)}, Cubes, PerCube);
      for (uint32_t I = 0; I < N; ++I)
        ASSERT_EQ(C[I], Want[I]) << I;
    }
  });
}

TEST(LoweringAlias, DisjointBuffersStillVectorize) {
  // Without the access group the vectoriser checks at run time that the
  // buffers do not overlap, and runs vector code when they do not.
  const char *Text = R"(
kernel @vadd cube_dim(256) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                            %c: buffer<f32, write>, %n: u32) {
  %i = absolute_pos : u32
  %ok = lt %i, %n : bool
  if %ok {
    %x = load %a[%i] : f32
    %y = load %b[%i] : f32
    %s = add %x, %y : f32
    store %c[%i], %s
  }
}
)";
  for (const CpuVariant &V : aliasVariants()) {
    SCOPED_TRACE(V.str());
    llvm::LLVMContext Ctx;
    LoweredModule L = lowerOnly(Text, Ctx, V);
    ASSERT_TRUE(L.Module);
    auto TM = createTargetMachine(CodeGenOptions{});
    ASSERT_TRUE(!!TM) << llvm::toString(TM.takeError());
    ASSERT_FALSE(!!optimizeModule(*L.Module, **TM, 3));
    std::string IR;
    llvm::raw_string_ostream OS(IR);
    L.Module->print(OS, nullptr);
    // The overlap test (LLVM's "memcheck", its "conflict" bits possibly
    // hoisted out of the cube loop).
    EXPECT_TRUE(IR.find("vector.memcheck") != std::string::npos ||
                IR.find("found.conflict") != std::string::npos ||
                IR.find("conflict.rdx") != std::string::npos)
        << IR;
    EXPECT_NE(IR.find("fadd <"), std::string::npos) << IR;
  }
  // And the vector loop computes the same as the scalar one.
  forEachAliasBuild(Text, [](const JitKernel &K) {
    std::vector<float> A(N), B(N), C(N + 8, -1.0f);
    for (uint32_t I = 0; I < N; ++I) {
      A[I] = float(I) * 0.5f;
      B[I] = 3.0f - float(I);
    }
    uint32_t Count = N;
    K.launch({buf(A), buf(B), KernelArg{C.data(), N}, val(Count)},
             {(N + 255) / 256, 1, 1});
    for (uint32_t I = 0; I < N + 8; ++I)
      ASSERT_EQ(C[I], I < N ? A[I] + B[I] : -1.0f) << I;
  });
}

TEST(LoweringAlias, InPlaceReverseThroughSharedMemory) {
  // Reverses each cube's elements in place: the cross-unit exchange goes
  // through shared memory and a barrier, as it must on a GPU too.
  const char *Text = R"(
kernel @rev cube_dim(64) (%in: buffer<u32, read>, %out: buffer<u32, write>) {
  %t = shared u32[64]
  %i = absolute_pos : u32
  %u = unit_pos : u32
  %x = load %in[%i] : u32
  store %t[%u], %x
  sync_cube
  %r = sub 63:u32, %u : u32
  %y = load %t[%r] : u32
  store %out[%i], %y
}
)";
  forEachAliasBuild(Text, [](const JitKernel &K) {
    constexpr uint32_t Total = 64 * 8;
    std::vector<uint32_t> Data(Total);
    for (uint32_t I = 0; I < Total; ++I)
      Data[I] = I * 11 + 1;
    KernelArg View{Data.data(), Total};
    K.launch({View, View}, {Total / 64, 1, 1});
    for (uint32_t I = 0; I < Total; ++I) {
      uint32_t From = I / 64 * 64 + (63 - I % 64);
      ASSERT_EQ(Data[I], From * 11 + 1) << I;
    }
  });
}

/// Whether \p I accesses memory through a buffer parameter's base pointer
/// (the load of "NAME.data" from the argument table).
bool isBufferAccess(const llvm::Instruction &I) {
  const llvm::Value *P = llvm::getLoadStorePointerOperand(&I);
  if (!P)
    return false;
  const llvm::Value *Base = llvm::getUnderlyingObject(P);
  return llvm::isa<llvm::LoadInst>(Base) && Base->getName().ends_with(".data");
}

TEST(LoweringAlias, BuffersShareOneScopeAndNoAccessGroup) {
  // All buffer accesses share one alias scope that scratch accesses (here
  // the shared array) are still declared apart from; no buffer access is in
  // a unit loop's access group, so the loop is not "annotated parallel" and
  // LLVM's own dependence analysis orders the buffer accesses. The default
  // variant keeps one scope per buffer.
  const char *Text = R"(
kernel @k cube_dim(64) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                        %c: buffer<f32, write>) {
  %t = shared f32[64]
  %i = absolute_pos : u32
  %u = unit_pos : u32
  %x = load %a[%i] : f32
  %y = load %b[%i] : f32
  %s = add %x, %y : f32
  store %t[%u], %s
  sync_cube
  %r = sub 63:u32, %u : u32
  %z = load %t[%r] : f32
  store %c[%i], %z
}
)";
  for (bool MayAlias : {true, false}) {
    SCOPED_TRACE(MayAlias ? "MayAlias" : "default");
    llvm::LLVMContext Ctx;
    LoweredModule L = lowerOnly(Text, Ctx, CpuVariant{true, 64, MayAlias});
    ASSERT_TRUE(L.Module);
    llvm::SmallPtrSet<llvm::MDNode *, 4> BufferScopes;
    std::vector<const llvm::Instruction *> Scratch;
    unsigned Buffers = 0;
    for (const llvm::Function &F : *L.Module)
      for (const llvm::Instruction &I : llvm::instructions(F)) {
        if (!llvm::isa<llvm::LoadInst, llvm::StoreInst>(I) ||
            !I.getMetadata(llvm::LLVMContext::MD_alias_scope))
          continue;
        if (!isBufferAccess(I)) {
          Scratch.push_back(&I);
          continue;
        }
        ++Buffers;
        BufferScopes.insert(I.getMetadata(llvm::LLVMContext::MD_alias_scope));
        EXPECT_EQ(I.getMetadata(llvm::LLVMContext::MD_access_group) != nullptr,
                  !MayAlias);
      }
    // Three accesses, in the unit loop and in its twin without checks.
    EXPECT_GE(Buffers, 3u);
    ASSERT_EQ(BufferScopes.size(), MayAlias ? 1u : 3u);
    ASSERT_FALSE(Scratch.empty());
    // Every scratch access is declared apart from every buffer scope.
    for (const llvm::Instruction *I : Scratch) {
      llvm::MDNode *NoAlias = I->getMetadata(llvm::LLVMContext::MD_noalias);
      ASSERT_TRUE(NoAlias);
      for (llvm::MDNode *S : BufferScopes) {
        bool Apart = false;
        for (const llvm::MDOperand &Op : NoAlias->operands())
          Apart |= Op.get() == S->getOperand(0).get();
        EXPECT_TRUE(Apart) << "a scratch access may alias a buffer";
      }
    }
  }
}

} // namespace

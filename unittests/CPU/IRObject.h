//===- IRObject.h - Compile LLVM IR text to an object, for tests -*- C++
//-*-===//

#ifndef KILN_UNITTESTS_CPU_IROBJECT_H
#define KILN_UNITTESTS_CPU_IROBJECT_H

#include "kiln/CPU/CodeGen.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Target/TargetMachine.h"

#include <gtest/gtest.h>

namespace kiln::test {

/// Parses \p IR, optimises it at \p OptLevel for the host and emits an
/// object; fails the test on any error.
inline llvm::SmallVector<char, 0> compileIR(llvm::StringRef IR,
                                            unsigned OptLevel = 2) {
  llvm::LLVMContext Ctx;
  llvm::SMDiagnostic Diag;
  std::unique_ptr<llvm::Module> M = llvm::parseAssemblyString(IR, Diag, Ctx);
  if (!M) {
    ADD_FAILURE() << "bad test IR: " << Diag.getMessage().str();
    return {};
  }
  auto TM = createTargetMachine({});
  if (!TM) {
    ADD_FAILURE() << llvm::toString(TM.takeError());
    return {};
  }
  if (llvm::Error E = optimizeModule(*M, **TM, OptLevel)) {
    ADD_FAILURE() << llvm::toString(std::move(E));
    return {};
  }
  auto Obj = emitObject(*M, **TM);
  if (!Obj) {
    ADD_FAILURE() << llvm::toString(Obj.takeError());
    return {};
  }
  return std::move(*Obj);
}

/// A cube function (CubeABI.h) named @\p Name: for every cube c of its range
/// and unit u < 64, i = c*64+u, if i < n: c[i] = a[i] + b[i] * K, with
/// arguments (a: f32 buffer, b: f32 buffer, c: f32 buffer, n: u32 value).
inline std::string vaddIR(llvm::StringRef Name, float K = 1.0f) {
  return (R"(
%KernelArg = type { ptr, i64 }
define void @)" +
          Name + R"((ptr %la, i32 %begin, i32 %end, ptr %scratch) {
entry:
  %args = load ptr, ptr %la
  %pa = getelementptr %KernelArg, ptr %args, i64 0, i32 0
  %a = load ptr, ptr %pa
  %pb = getelementptr %KernelArg, ptr %args, i64 1, i32 0
  %b = load ptr, ptr %pb
  %pc = getelementptr %KernelArg, ptr %args, i64 2, i32 0
  %c = load ptr, ptr %pc
  %pn = getelementptr %KernelArg, ptr %args, i64 3, i32 0
  %np = load ptr, ptr %pn
  %n = load i32, ptr %np
  %empty = icmp uge i32 %begin, %end
  br i1 %empty, label %done, label %cube
cube:
  %cb = phi i32 [ %begin, %entry ], [ %cnext, %cubeend ]
  br label %unit
unit:
  %u = phi i32 [ 0, %cube ], [ %unext, %next ]
  %base = mul i32 %cb, 64
  %i = add i32 %base, %u
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %next
body:
  %i64 = zext i32 %i to i64
  %xa = getelementptr float, ptr %a, i64 %i64
  %x = load float, ptr %xa
  %ya = getelementptr float, ptr %b, i64 %i64
  %y = load float, ptr %ya
  %yk = fmul float %y, )" +
          std::to_string(double(K)) + R"(
  %s = fadd float %x, %yk
  %za = getelementptr float, ptr %c, i64 %i64
  store float %s, ptr %za
  br label %next
next:
  %unext = add i32 %u, 1
  %more = icmp ult i32 %unext, 64
  br i1 %more, label %unit, label %cubeend
cubeend:
  %cnext = add i32 %cb, 1
  %cmore = icmp ult i32 %cnext, %end
  br i1 %cmore, label %cube, label %done
done:
  ret void
}
)")
      .str();
}

} // namespace kiln::test

#endif // KILN_UNITTESTS_CPU_IROBJECT_H

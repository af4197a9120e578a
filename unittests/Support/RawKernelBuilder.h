//===- RawKernelBuilder.h - Raw test kernels for verifier tests -*- C++ -*-===//
//
// Part of the test-support library (unittests/Support). A small helper that
// builds kiln::IRKernel structures directly, giving each
// operation its own source line so that diagnostics can be checked for their
// locations and order. It builds whatever it is told, ill-formed included.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_UNITTESTS_SUPPORT_RAWKERNELBUILDER_H
#define KILN_UNITTESTS_SUPPORT_RAWKERNELBUILDER_H

#include "kiln/IR/Diagnostic.h"
#include "kiln/IR/Kernel.h"
#include "kiln/IR/Verifier.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln::test {

inline constexpr Type F32 = Type::scalar(ScalarKind::F32);
inline constexpr Type F64 = Type::scalar(ScalarKind::F64);
inline constexpr Type I32 = Type::scalar(ScalarKind::I32);
inline constexpr Type U32 = Type::scalar(ScalarKind::U32);
inline constexpr Type U8 = Type::scalar(ScalarKind::U8);
inline constexpr Type Bool = Type::scalar(ScalarKind::Bool);

/// Builds one kernel; operation N (counting from 1 in creation order) is at
/// line N + 1, column 3; the kernel itself is at 1:1.
class RawKernelBuilder {
public:
  explicit RawKernelBuilder(std::string Name = "k", uint32_t CubeX = 64) {
    K.Name = std::move(Name);
    K.CubeDim = {CubeX, 1, 1};
    K.Loc = {1, 1};
    Blocks.push_back(&K.Body);
  }

  IRKernel &kernel() { return K; }

  ValueId param(const std::string &Name, Type Ty) {
    ValueId Id = K.addValue({Name,
                             ValueKind::Plain,
                             Ty,
                             AccessKind::ReadWrite,
                             0,
                             {1, static_cast<uint32_t>(10 + K.Params.size())}});
    K.Params.push_back(Id);
    return Id;
  }
  ValueId buffer(const std::string &Name, Type Ty, AccessKind Access) {
    ValueId Id = K.addValue({Name,
                             ValueKind::Buffer,
                             Ty,
                             Access,
                             0,
                             {1, static_cast<uint32_t>(10 + K.Params.size())}});
    K.Params.push_back(Id);
    return Id;
  }

  static Operand v(ValueId Id) { return Operand::value(Id); }
  static Operand lit(Type Ty, uint64_t Bits) {
    return Operand::literal({Ty, Bits});
  }
  static Operand u32(uint32_t X) { return lit(U32, X); }

  /// A value-producing operation; returns its result.
  ValueId op(OpKind Kind, Type Ty, std::vector<Operand> Ops = {},
             uint8_t Component = 0) {
    Operation &Op = add(Kind, std::move(Ops));
    Op.ResultType = Ty;
    Op.Component = Component;
    Op.Result =
        K.addValue({"v" + std::to_string(K.Values.size()), ValueKind::Plain, Ty,
                    AccessKind::ReadWrite, 0, Op.Loc});
    return Op.Result;
  }
  ValueId constant(Type Ty, std::vector<uint64_t> Bits) {
    ValueId Id = op(OpKind::Const, Ty);
    last().ConstBits = std::move(Bits);
    return Id;
  }
  /// An operation without a result.
  Operation &effect(OpKind Kind, std::vector<Operand> Ops = {}) {
    return add(Kind, std::move(Ops));
  }

  ValueId var(const std::string &Name, Type Ty) {
    Operation &Op = add(OpKind::Var, {});
    Op.ResultType = Ty;
    Op.Result = K.addValue(
        {Name, ValueKind::Var, Ty, AccessKind::ReadWrite, 0, Op.Loc});
    return Op.Result;
  }
  ValueId array(OpKind Kind, const std::string &Name, Type Ty, uint64_t Count) {
    Operation &Op = add(Kind, {});
    Op.ResultType = Ty;
    Op.ArraySize = Count;
    Op.Result = K.addValue(
        {Name, Kind == OpKind::Shared ? ValueKind::Shared : ValueKind::Local,
         Ty, AccessKind::ReadWrite, Count, Op.Loc});
    return Op.Result;
  }

  using BodyFn = std::function<void()>;
  void ifThen(Operand Cond, BodyFn Then, BodyFn Else = nullptr) {
    Operation &Op = add(OpKind::If, {Cond});
    Op.HasElse = Else != nullptr;
    Op.Regions.resize(Else ? 2 : 1);
    size_t Index = Blocks.back()->Ops.size() - 1;
    Block *Parent = Blocks.back();
    fill([&]() -> Block & { return Parent->Ops[Index].Regions[0]; }, Then);
    if (Else)
      fill([&]() -> Block & { return Parent->Ops[Index].Regions[1]; }, Else);
  }
  /// for %i = Lo to Hi [step Step]; Body gets the induction variable.
  void forLoop(Type Ty, std::vector<Operand> Bounds,
               std::function<void(ValueId)> Body) {
    Operation &Op = add(OpKind::For, std::move(Bounds));
    Op.ResultType = Ty;
    Op.Result =
        K.addValue({"i" + std::to_string(K.Values.size()), ValueKind::Plain, Ty,
                    AccessKind::ReadWrite, 0, Op.Loc});
    ValueId Iv = Op.Result;
    Op.Regions.resize(1);
    size_t Index = Blocks.back()->Ops.size() - 1;
    Block *Parent = Blocks.back();
    fill([&]() -> Block & { return Parent->Ops[Index].Regions[0]; },
         [&] { Body(Iv); });
  }
  void loop(BodyFn Body) {
    Operation &Op = add(OpKind::Loop, {});
    Op.Regions.resize(1);
    size_t Index = Blocks.back()->Ops.size() - 1;
    Block *Parent = Blocks.back();
    fill([&]() -> Block & { return Parent->Ops[Index].Regions[0]; }, Body);
  }
  void switchOn(Operand Sel, std::vector<std::pair<int64_t, BodyFn>> Cases,
                BodyFn Default = nullptr) {
    Operation &Op = add(OpKind::Switch, {Sel});
    Op.HasDefault = Default != nullptr;
    Op.Regions.resize(Cases.size() + (Default ? 1 : 0));
    for (auto &C : Cases)
      Op.CaseValues.push_back(C.first);
    size_t Index = Blocks.back()->Ops.size() - 1;
    Block *Parent = Blocks.back();
    for (size_t I = 0; I < Cases.size(); ++I)
      fill([&]() -> Block & { return Parent->Ops[Index].Regions[I]; },
           Cases[I].second);
    if (Default)
      fill(
          [&]() -> Block & { return Parent->Ops[Index].Regions[Cases.size()]; },
          Default);
  }

  Operation &last() { return Blocks.back()->Ops.back(); }

private:
  IRKernel K;
  std::vector<Block *> Blocks;
  uint32_t NextLine = 2;

  Operation &add(OpKind Kind, std::vector<Operand> Ops) {
    Operation Op;
    Op.Kind = Kind;
    Op.Loc = {NextLine, 3};
    // Operands sit on the operation's line, after its name.
    for (size_t I = 0; I < Ops.size(); ++I)
      if (!Ops[I].Loc.isValid())
        Ops[I].Loc = {NextLine, static_cast<uint32_t>(20 + 10 * I)};
    ++NextLine;
    Op.Operands = std::move(Ops);
    Blocks.back()->Ops.push_back(std::move(Op));
    return Blocks.back()->Ops.back();
  }
  /// Runs \p Body with the block \p Get returns as the current one. The
  /// block is looked up again after the body since the parent vector may
  /// reallocate while the body adds to its own block only.
  void fill(const std::function<Block &()> &Get, const BodyFn &Body) {
    Block Tmp;
    Blocks.push_back(&Tmp);
    Body();
    Blocks.pop_back();
    Get() = std::move(Tmp);
  }
};

/// The diagnostics of verifying \p K ("FILE:LINE:COL: error: MESSAGE"), empty
/// when it verifies.
inline std::vector<std::string> diagnose(const IRKernel &K,
                                         const DeviceLimits &Limits = {}) {
  std::vector<std::string> Out;
  llvm::Error E = verifyKernel(K, Limits, "t.kiln");
  llvm::handleAllErrors(
      std::move(E),
      [&](const DiagnosticError &D) {
        for (const Diagnostic &X : D.diagnostics())
          Out.push_back(X.str());
      },
      [&](const llvm::ErrorInfoBase &Other) {
        Out.push_back("unexpected error: " + Other.message());
      });
  return Out;
}

} // namespace kiln::test

#endif // KILN_UNITTESTS_SUPPORT_RAWKERNELBUILDER_H

//===- LowerPlane.cpp - Plane operations, computed at cube level ----------===//
//
// At a plane operation every unit's operand is in its per-unit slot. Plane p
// holds units [p*P, min((p+1)*P, units)): the last plane may be partial. The
// result of every unit is written to the result's per-unit slot. Units that
// returned take no part in reductions, scans, ballots and elections; a
// shuffle from a lane outside the plane gives the unit its own value.
//
// This file holds the scalar form (a loop per plane over its lanes, floats
// combined in lane order) and sends what it can to the vector form
// (LowerPlaneVector.cpp, docs/Lowering.md §6).
//
//===----------------------------------------------------------------------===//

#include "KeepLoop.h"
#include "LoweringImpl.h"

#include "llvm/IR/Intrinsics.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

/// Marks the loop whose exit block is \p Exit as one not to unroll or
/// vectorise. The loop over a cube's planes has a constant trip count
/// (units / plane size); unrolled in full, with its short per-plane loops
/// unrolled inside, it became one straight block of a load per unit (1024
/// for a cube of 1024), on which the SLP vectoriser's alias queries and the
/// scheduler are quadratic: seconds of compile time for one plane_elect
/// after a divergent return with plane sizes 8 and 16 (a kiln-fuzz-lower
/// timeout, docs/Reliability.md). Iterating over planes costs one branch
/// per plane; the per-plane loops may still unroll and vectorise.
void PlaneEmitter::keepLoopOverPlanesEndingAt(llvm::BasicBlock *Exit) {
  // UnitLoops::emitCountedLoop: the header is the exit's one predecessor,
  // and its counter's second incoming block is the latch.
  llvm::BasicBlock *Header = Exit->getSinglePredecessor();
  auto *Counter = Header ? llvm::dyn_cast<llvm::PHINode>(&Header->front())
                         : nullptr;
  if (!Counter || Counter->getNumIncomingValues() != 2)
    return;
  // Nor vectorised: with its per-plane loops unrolled, the vectoriser took
  // the 64 planes of 16 units as 64 lanes, one vector iteration of 16
  // gathers, scalarised into the same 1024 loads. The per-plane loops (the
  // innermost) are what vectorises well.
  keepLoop(Counter->getIncomingBlock(1)->getTerminator());
}

llvm::Constant *PlaneEmitter::identity(OpKind Kind, Type T) {
  llvm::Type *Ty = Types.valueType(T);
  if (T.elementKind() == ScalarKind::BF16) { // bit patterns (LowerBF16.cpp)
    bool Prod = Kind == OpKind::PlaneProd ||
                Kind == OpKind::PlaneInclusiveProd ||
                Kind == OpKind::PlaneExclusiveProd;
    uint16_t Bits = Prod                       ? 0x3F80  // 1.0
                    : Kind == OpKind::PlaneMin ? 0x7F80  // +inf
                    : Kind == OpKind::PlaneMax ? 0xFF80  // -inf
                                               : 0x0000; // +0.0
    return llvm::ConstantInt::get(Ty, Bits);
  }
  unsigned W = Ty->getScalarSizeInBits();
  switch (Kind) {
  case OpKind::PlaneProd:
  case OpKind::PlaneInclusiveProd:
  case OpKind::PlaneExclusiveProd:
    return T.isFloat() ? llvm::ConstantFP::get(Ty, 1.0)
                       : llvm::ConstantInt::get(Ty, 1);
  case OpKind::PlaneMin:
    if (T.isFloat())
      return llvm::ConstantFP::getInfinity(Ty, false);
    return llvm::ConstantInt::get(Ty, T.isSigned()
                                          ? llvm::APInt::getSignedMaxValue(W)
                                          : llvm::APInt::getMaxValue(W));
  case OpKind::PlaneMax:
    if (T.isFloat())
      return llvm::ConstantFP::getInfinity(Ty, true);
    return llvm::ConstantInt::get(Ty, T.isSigned()
                                          ? llvm::APInt::getSignedMinValue(W)
                                          : llvm::APInt::getMinValue(W));
  case OpKind::PlaneAll:
    return llvm::Constant::getAllOnesValue(Ty);
  case OpKind::PlaneSum:
  case OpKind::PlaneInclusiveSum:
  case OpKind::PlaneExclusiveSum:
  case OpKind::PlaneAny:
    return llvm::Constant::getNullValue(Ty);
  default:
    Cx.fail(SourceLoc(),
            "internal error: '" + opName(Kind) + "' is not a plane reduction");
    return llvm::Constant::getNullValue(Ty);
  }
}

Value *PlaneEmitter::combine(OpKind Kind, Type T, Value *Acc, Value *X) {
  llvm::IRBuilder<> &B = Cx.B;
  switch (Kind) {
  case OpKind::PlaneProd:
  case OpKind::PlaneInclusiveProd:
  case OpKind::PlaneExclusiveProd:
    return Scalar.emitBinary(OpKind::Mul, T, Acc, X);
  case OpKind::PlaneMin:
    return Scalar.emitMinMax(false, T, Acc, X);
  case OpKind::PlaneMax:
    return Scalar.emitMinMax(true, T, Acc, X);
  case OpKind::PlaneAll:
    return B.CreateAnd(Acc, X);
  case OpKind::PlaneAny:
    return B.CreateOr(Acc, X);
  case OpKind::PlaneSum:
  case OpKind::PlaneInclusiveSum:
  case OpKind::PlaneExclusiveSum:
    return Scalar.emitBinary(OpKind::Add, T, Acc, X);
  default:
    Cx.fail(SourceLoc(),
            "internal error: '" + opName(Kind) + "' is not a plane reduction");
    return Acc;
  }
}

bool PlaneEmitter::checkOperands(const Operation &Op) {
  if (Op.Result == NoValue) {
    Cx.fail(Op.Loc, "plane operation without a result");
    return false;
  }
  bool NeedsOperand = Op.opClass() != OpClass::PlaneElect;
  if (NeedsOperand && Op.Operands.empty()) {
    Cx.fail(Op.Loc, "'" + opName(Op.Kind) + "' needs an operand");
    return false;
  }
  if (Op.opClass() == OpClass::PlaneLane && Op.Operands.size() < 2) {
    Cx.fail(Op.Loc, "'" + opName(Op.Kind) + "' needs a lane operand");
    return false;
  }
  return true;
}

void PlaneEmitter::lowerPlaneOps(llvm::ArrayRef<const Operation *> Ops) {
  while (!Ops.empty()) {
    size_t N = 0;
    while (N < Ops.size() && vectorFormApplies(*Ops[N]))
      ++N;
    if (N) {
      lowerAsVectors(Ops.take_front(N));
      Ops = Ops.drop_front(N);
      continue;
    }
    lowerPlaneOp(*Ops.front());
    Ops = Ops.drop_front();
  }
}

void PlaneEmitter::lowerPlaneOp(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  if (!checkOperands(Op))
    return;
  Type T = Op.ResultType;
  ValueId R = Op.Result;
  Value *P = B.getInt32(Cx.PlaneDim);
  Value *UnitsV = B.getInt32(Cx.Units);
  Value *Planes =
      B.getInt32((uint64_t(Cx.Units) + Cx.PlaneDim - 1) / Cx.PlaneDim);
  auto PlaneRange = [&](Value *Plane) {
    Value *Base = B.CreateMul(Plane, P);
    Value *End = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin,
                                         B.CreateAdd(Base, P), UnitsV);
    return std::make_pair(Base, End);
  };
  auto Active = [&](Value *U) -> Value * {
    return Cx.Layout.HasFlags ? B.CreateNot(Pos.unitFinished(U)) : B.getTrue();
  };

  if (Op.opClass() == OpClass::PlaneLane) {
    Type LaneTy = Values.operandType(Op.Operands[1]);
    Pos.emitCountedLoop(
        B.getInt32(0), UnitsV,
        [&](Value *U) {
          auto [Base, End] = PlaneRange(B.CreateUDiv(U, P));
          Value *Lane = B.CreateZExt(B.CreateSub(U, Base), Cx.I64);
          Value *Len = B.CreateZExt(B.CreateSub(End, Base), Cx.I64);
          Value *Arg = Values.value(Op.Operands[1], U);
          Arg = LaneTy.isSigned() ? B.CreateSExtOrTrunc(Arg, Cx.I64)
                                  : B.CreateZExtOrTrunc(Arg, Cx.I64);
          Value *Src, *Valid;
          switch (Op.Kind) {
          case OpKind::PlaneShuffleXor:
            Src = B.CreateXor(Lane, Arg);
            Valid = B.CreateICmpULT(Src, Len);
            break;
          case OpKind::PlaneShuffleUp:
            Src = B.CreateSub(Lane, Arg);
            Valid = B.CreateAnd(B.CreateICmpULE(Arg, Lane),
                                B.CreateICmpULT(Src, Len));
            break;
          case OpKind::PlaneShuffleDown:
            Src = B.CreateAdd(Lane, Arg);
            Valid = B.CreateAnd(B.CreateICmpULT(Arg, Len),
                                B.CreateICmpULT(Src, Len));
            break;
          case OpKind::PlaneBroadcast:
          case OpKind::PlaneShuffle: // an absolute lane
            Src = Arg;
            Valid = B.CreateICmpULT(Src, Len);
            break;
          default:
            Cx.fail(Op.Loc, "internal error: '" + opName(Op.Kind) +
                                "' is not a plane lane operation");
            Src = Lane;
            Valid = B.getFalse();
            break;
          }
          Value *SrcUnit = B.CreateSelect(
              Valid,
              B.CreateAdd(Base, B.CreateTrunc(B.CreateSelect(Valid, Src, Lane),
                                              Cx.I32)),
              U);
          Memory.storeSlot(R, U, Values.value(Op.Operands[0], SrcUnit));
        },
        "plane.lane");
    return;
  }

  Pos.emitCountedLoop(
      B.getInt32(0), Planes,
      [&](Value *Plane) {
        auto [Base, End] = PlaneRange(Plane);
        switch (Op.opClass()) {
        case OpClass::PlaneElect: {
          llvm::AllocaInst *Found = Cx.entryAlloca(Cx.I1, "elected");
          B.CreateStore(B.getFalse(), Found);
          Pos.emitCountedLoop(
              Base, End,
              [&](Value *U) {
                Value *Act = Active(U);
                Value *Was = B.CreateLoad(Cx.I1, Found);
                Memory.storeSlot(R, U, B.CreateAnd(Act, B.CreateNot(Was)));
                B.CreateStore(B.CreateOr(Was, Act), Found);
              },
              "plane.elect");
          return;
        }
        case OpClass::PlaneBallot: {
          llvm::Type *VT = Types.valueType(T);
          llvm::AllocaInst *Mask = Cx.entryAlloca(VT, "ballot");
          B.CreateStore(llvm::Constant::getNullValue(VT), Mask);
          Pos.emitCountedLoop(
              Base, End,
              [&](Value *U) {
                Value *Lane = B.CreateSub(U, Base);
                Value *Bit = B.CreateAnd(
                    B.CreateAnd(Values.value(Op.Operands[0], U), Active(U)),
                    B.CreateICmpULT(Lane, B.getInt32(128)));
                Value *Word = B.CreateAnd(B.CreateLShr(Lane, 5), B.getInt32(3));
                Value *One = B.CreateShl(B.getInt32(1),
                                         B.CreateAnd(Lane, B.getInt32(31)));
                Value *Add = B.CreateInsertElement(
                    llvm::Constant::getNullValue(VT),
                    B.CreateSelect(Bit, One, B.getInt32(0)), Word);
                B.CreateStore(B.CreateOr(B.CreateLoad(VT, Mask), Add), Mask);
              },
              "plane.ballot");
          Value *Final = B.CreateLoad(VT, Mask);
          Pos.emitCountedLoop(
              Base, End, [&](Value *U) { Memory.storeSlot(R, U, Final); },
              "plane.write");
          return;
        }
        default:
          break;
        }
        llvm::Type *VT = Types.valueType(T);
        llvm::AllocaInst *Acc = Cx.entryAlloca(VT, "plane.acc");
        B.CreateStore(identity(Op.Kind, T), Acc);
        bool Inclusive = Op.Kind == OpKind::PlaneInclusiveSum ||
                         Op.Kind == OpKind::PlaneInclusiveProd;
        bool Scan = Inclusive || Op.Kind == OpKind::PlaneExclusiveSum ||
                    Op.Kind == OpKind::PlaneExclusiveProd;
        Pos.emitCountedLoop(
            Base, End,
            [&](Value *U) {
              Value *Old = B.CreateLoad(VT, Acc);
              Value *New =
                  combine(Op.Kind, T, Old, Values.value(Op.Operands[0], U));
              New = B.CreateSelect(Active(U), New, Old);
              B.CreateStore(New, Acc);
              if (Scan)
                Memory.storeSlot(R, U, Inclusive ? New : Old);
            },
            "plane.reduce");
        if (!Scan) {
          Value *Final = B.CreateLoad(VT, Acc);
          Pos.emitCountedLoop(
              Base, End, [&](Value *U) { Memory.storeSlot(R, U, Final); },
              "plane.write");
        }
      },
      "plane");
  keepLoopOverPlanesEndingAt(B.GetInsertBlock());
}

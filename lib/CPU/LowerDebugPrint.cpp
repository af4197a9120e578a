//===- LowerDebugPrint.cpp - debug_print as a call of the runtime ---------===//
//
// `debug_print "FORMAT", %a, %b` becomes, in the unit's code:
//
//   store the operands as 64-bit words in an entry-block array
//   call void @kiln_debug_print(ptr @fmt, ptr %words, i32 2)
//
// The format is a private constant of the object and kiln_debug_print an
// external symbol (kiln/CPU/DebugPrint.h): nothing of the process is baked
// into the code. Integers are sign- or zero-extended as their conversion
// reads them (%d of an i8 -1 prints -1, %u of it 255), bool is 0 or 1, and
// floats travel as doubles, promoted as C promotes varargs. A kernel without
// debug_print gets none of this.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "kiln/CPU/DebugPrint.h"
#include "kiln/IR/DebugFormat.h"

#include "llvm/IR/Module.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

void ScalarEmitter::lowerDebugPrint(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  std::vector<DebugConversion> Convs;
  if (parseDebugFormat(Op.Text, Convs) || Convs.size() != Op.Operands.size()) {
    Cx.fail(Op.Loc, "debug_print with an unverified format");
    return;
  }
  Cx.UsesDebugPrint = true;
  llvm::Module &M = *Cx.M;
  llvm::FunctionCallee Print = M.getOrInsertFunction(
      debugPrintSymbol(),
      llvm::FunctionType::get(llvm::Type::getVoidTy(Cx.Ctx),
                              {Cx.Ptr, Cx.Ptr, Cx.I32}, false));
  if (auto *F = llvm::dyn_cast<llvm::Function>(Print.getCallee()))
    F->setDoesNotThrow();
  llvm::Constant *Format = B.CreateGlobalString(Op.Text, "kiln.debug.format",
                                                0, &M);
  Value *Words = llvm::ConstantPointerNull::get(
      llvm::PointerType::getUnqual(Cx.Ctx));
  if (!Convs.empty()) {
    auto *ArrayTy = llvm::ArrayType::get(Cx.I64, Convs.size());
    llvm::AllocaInst *Slots = Cx.entryAlloca(ArrayTy, "debug.words");
    for (size_t I = 0; I < Convs.size(); ++I) {
      Value *V = Values.operand(Op, unsigned(I));
      Type T = Values.operandType(Op.Operands[I]);
      Value *Word;
      if (Convs[I].Kind == DebugConversionKind::Float) {
        Value *D = T.elementKind() == ScalarKind::F64
                       ? V
                       : emitCast(V, T, Type::scalar(ScalarKind::F64));
        Word = B.CreateBitCast(D, Cx.I64);
      } else if (T.isBool() ||
                 Convs[I].Kind != DebugConversionKind::Signed ||
                 !T.isSigned()) {
        Word = B.CreateZExt(V, Cx.I64);
      } else {
        Word = B.CreateSExt(V, Cx.I64);
      }
      B.CreateStore(Word, B.CreateConstInBoundsGEP2_32(ArrayTy, Slots, 0,
                                                       unsigned(I)));
    }
    Words = Slots;
  }
  B.CreateCall(Print, {Format, Words, B.getInt32(uint32_t(Convs.size()))});
}

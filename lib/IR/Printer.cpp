//===- Printer.cpp - Print the canonical text form ------------------------===//
//
// The canonical form: two-space indentation, one operation per line,
// parameters on the kernel line, literals as printLiteral writes them. It
// never fails: a malformed kernel (from the Builder, say) still prints, with
// `%?N` for an id that names no value.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/Printer.h"
#include "kiln/IR/DebugFormat.h"
#include "kiln/IR/Literal.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace kiln;

namespace {

class Printer {
public:
  Printer(const IRKernel &K, llvm::raw_ostream &OS) : K(K), OS(OS) {}
  void printKernel();
  void printOperation(const Operation &Op);

private:
  void indent() { OS.indent(2 * Level); }
  void printValue(ValueId Id);
  void printOperand(const Operand &O);
  void printIndex(const Operand &O);
  void printOperands(const Operation &Op, size_t First = 0);
  /// An effect whose operands follow bracketedOperandShape.
  void printBracketed(const Operation &Op);
  void printBlock(const Block &B);
  void printRegion(const Operation &Op, size_t I);
  void printCmma(const Operation &Op);
  void printIm2colLoad(const Operation &Op);

  const IRKernel &K;
  llvm::raw_ostream &OS;
  unsigned Level = 0;
};

} // namespace

void Printer::printValue(ValueId Id) {
  if (Id >= K.Values.size()) {
    OS << "%?" << Id;
    return;
  }
  const std::string &Name = K.Values[Id].Name;
  if (Name.empty())
    OS << '%' << Id;
  else
    OS << '%' << Name;
}

void Printer::printOperand(const Operand &O) {
  if (!O.isLiteral()) {
    printValue(O.Value);
    return;
  }
  // A splatted literal (splatScalarLiterals) is written as the scalar it
  // was.
  OS << printLiteral(O.Lit.Bits, O.Lit.Ty.elementKind()) << ':'
     << O.Lit.Ty.elementType().str();
}

void Printer::printIndex(const Operand &O) {
  // u32 literal indices print bare: `%m[2]`.
  if (O.isLiteral() && O.Lit.Ty == Type::scalar(ScalarKind::U32))
    OS << printLiteral(O.Lit.Bits, ScalarKind::U32);
  else
    printOperand(O);
}

void Printer::printOperands(const Operation &Op, size_t First) {
  for (size_t I = First; I < Op.Operands.size(); ++I) {
    OS << (I == First ? " " : ", ");
    printOperand(Op.Operands[I]);
  }
}

void Printer::printIm2colLoad(const Operation &Op) {
  // 4 + rank coordinates + (rank - 2) offsets: the split is in the count.
  size_t N = Op.Operands.size();
  size_t Offsets = N >= 6 ? (N - 6) / 2 : 0;
  OS << opName(Op.Kind);
  for (size_t I = 0; I < N; ++I) {
    bool FirstOffset = I == N - Offsets;
    OS << (I == 0 ? " " : FirstOffset ? " offsets " : ", ");
    printOperand(Op.Operands[I]);
  }
  OS << '\n';
}

void Printer::printBracketed(const Operation &Op) {
  OS << opName(Op.Kind);
  const std::vector<unsigned> &Shape = *bracketedOperandShape(Op.opClass());
  size_t Next = 0;
  for (size_t G = 0; G < Shape.size() && Next < Op.Operands.size(); ++G) {
    OS << (G ? ", " : " ");
    printOperand(Op.Operands[Next++]);
    if (Shape[G] == 0)
      continue;
    OS << '[';
    for (unsigned I = 0; I < Shape[G] && Next < Op.Operands.size(); ++I) {
      OS << (I ? ", " : "");
      printIndex(Op.Operands[Next++]);
    }
    OS << ']';
  }
  // A malformed operation (from the builder) still prints every operand.
  if (Next < Op.Operands.size())
    printOperands(Op, Next);
  OS << '\n';
}

void Printer::printBlock(const Block &B) {
  ++Level;
  for (const Operation &Op : B.Ops)
    printOperation(Op);
  --Level;
}

void Printer::printRegion(const Operation &Op, size_t I) {
  OS << "{\n";
  if (I < Op.Regions.size())
    printBlock(Op.Regions[I]);
  indent();
  OS << '}';
}

void Printer::printOperation(const Operation &Op) {
  indent();
  OpClass Class = Op.opClass();
  switch (Class) {
  case OpClass::If:
    OS << "if";
    printOperands(Op);
    OS << ' ';
    printRegion(Op, 0);
    if (Op.HasElse) {
      OS << " else ";
      printRegion(Op, 1);
    }
    OS << '\n';
    return;
  case OpClass::For:
    OS << "for ";
    printValue(Op.Result);
    OS << " =";
    if (Op.Operands.size() > 0) {
      OS << ' ';
      printOperand(Op.Operands[0]);
    }
    OS << " to";
    if (Op.Operands.size() > 1) {
      OS << ' ';
      printOperand(Op.Operands[1]);
    }
    if (Op.Operands.size() > 2) {
      OS << " step ";
      printOperand(Op.Operands[2]);
    }
    OS << ' ';
    printRegion(Op, 0);
    OS << '\n';
    return;
  case OpClass::Loop:
    OS << "loop ";
    printRegion(Op, 0);
    OS << '\n';
    return;
  case OpClass::Switch: {
    OS << "switch";
    printOperands(Op);
    OS << " {\n";
    ++Level;
    size_t Cases = std::min(switchCaseCount(Op), Op.Regions.size());
    for (size_t I = 0; I < Cases; ++I) {
      indent();
      OS << "case ";
      llvm::ListSeparator Comma(", ");
      for (CaseLabel Label : switchCaseLabels(Op, I))
        OS << Comma << Label;
      OS << ' ';
      printRegion(Op, I);
      OS << '\n';
    }
    if (Op.HasDefault && !Op.Regions.empty()) {
      indent();
      OS << "default ";
      printRegion(Op, Op.Regions.size() - 1);
      OS << '\n';
    }
    --Level;
    indent();
    OS << "}\n";
    return;
  }
  case OpClass::VarDecl:
    printValue(Op.Result);
    OS << " = var " << Op.ResultType.str() << '\n';
    return;
  case OpClass::ArrayDecl:
    printValue(Op.Result);
    OS << " = " << opName(Op.Kind) << ' ' << Op.ResultType.str() << '['
       << Op.ArraySize << "]\n";
    return;
  case OpClass::BarrierDecl:
    printValue(Op.Result);
    OS << " = " << opName(Op.Kind);
    printOperands(Op);
    OS << '\n';
    return;
  case OpClass::AsyncCopy:
    printBracketed(Op);
    return;
  case OpClass::TensorCopy:
    if (Op.Kind != OpKind::TmaLoadIm2col)
      break;
    printIm2colLoad(Op);
    return;
  case OpClass::MatrixDecl:
    printValue(Op.Result);
    OS << " = fragment " << Op.Matrix.str() << '\n';
    return;
  case OpClass::Cmma:
    printCmma(Op);
    return;
  case OpClass::DebugPrint:
    OS << "debug_print " << quoteDebugFormat(Op.Text);
    for (const Operand &O : Op.Operands) {
      OS << ", ";
      printOperand(O);
    }
    OS << '\n';
    return;
  case OpClass::Const: {
    printValue(Op.Result);
    OS << " = const ";
    ScalarKind Elem = Op.ResultType.elementKind();
    if (Op.ResultType.isLine()) {
      OS << '[';
      for (size_t I = 0; I < Op.ConstBits.size(); ++I)
        OS << (I ? ", " : "") << printLiteral(Op.ConstBits[I], Elem);
      OS << ']';
    } else {
      OS << printLiteral(Op.ConstBits.empty() ? 0 : Op.ConstBits[0], Elem);
    }
    OS << " : " << Op.ResultType.str() << '\n';
    return;
  }
  default:
    break;
  }

  bool HasResult = producesValue(Class);
  if (HasResult) {
    printValue(Op.Result);
    OS << " = ";
  }
  OS << opName(Op.Kind);
  if (Class == OpClass::BuiltinXYZ && Op.Component >= 1 && Op.Component <= 3)
    OS << '.' << "xyz"[Op.Component - 1];
  if (hasIndexedFirstOperand(Class) && Op.Operands.size() >= 2) {
    OS << ' ';
    printOperand(Op.Operands[0]);
    OS << '[';
    printIndex(Op.Operands[1]);
    OS << ']';
    if (Op.Operands.size() > 2) {
      OS << ',';
      printOperands(Op, 2);
    }
  } else {
    printOperands(Op);
  }
  if (HasResult)
    OS << " : " << Op.ResultType.str();
  OS << '\n';
}

void Printer::printCmma(const Operation &Op) {
  // cmma_load and cmma_ldmatrix hold `%m[idx]` as operands 1 and 2,
  // cmma_store as 0 and 1.
  size_t Indexed = Op.Kind == OpKind::CmmaLoad ||
                           Op.Kind == OpKind::CmmaLdmatrix
                       ? 1
                   : Op.Kind == OpKind::CmmaStore ? 0
                                                  : Op.Operands.size();
  OS << opName(Op.Kind);
  for (size_t I = 0; I < Op.Operands.size(); ++I) {
    OS << (I == 0 ? " " : ", ");
    printOperand(Op.Operands[I]);
    if (I == Indexed && I + 1 < Op.Operands.size()) {
      OS << '[';
      printIndex(Op.Operands[++I]);
      OS << ']';
    }
  }
  if (Op.Layout != MatrixLayout::Undefined)
    OS << ", " << matrixLayoutName(Op.Layout);
  if (Op.Transpose)
    OS << ", trans";
  OS << '\n';
}

void Printer::printKernel() {
  OS << "kernel @" << K.Name << " cube_dim(";
  unsigned Rank = std::clamp<unsigned>(K.CubeDimRank, 1, 3);
  for (unsigned I = 0; I < Rank; ++I)
    OS << (I ? ", " : "") << K.CubeDim[I];
  OS << ')';
  if (K.PlaneDim)
    OS << " plane_dim(" << *K.PlaneDim << ')';
  if (K.ClusterDimRank) {
    OS << " cluster_dim(";
    unsigned ClusterRank = std::min<unsigned>(K.ClusterDimRank, 3);
    for (unsigned I = 0; I < ClusterRank; ++I)
      OS << (I ? ", " : "") << K.ClusterDim[I];
    OS << ')';
  }
  OS << " (";
  for (size_t I = 0; I < K.Params.size(); ++I) {
    OS << (I ? ", " : "");
    ValueId Id = K.Params[I];
    printValue(Id);
    OS << ": ";
    if (Id >= K.Values.size()) {
      OS << "?";
      continue;
    }
    const ValueInfo &Info = K.Values[Id];
    if (Info.Kind == ValueKind::Buffer)
      OS << (Info.IsTensorMap ? "tensor_map<" : "buffer<") << Info.Ty.str()
         << ", " << accessName(Info.Access)
         << (Info.IsIm2col ? ", im2col>" : ">");
    else
      OS << Info.Ty.str();
  }
  OS << ") {\n";
  printBlock(K.Body);
  OS << "}\n";
}

std::string kiln::printKernel(const IRKernel &K) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  Printer(K, OS).printKernel();
  return S;
}

std::string kiln::printModule(const Module &M) {
  std::string S;
  for (size_t I = 0; I < M.Kernels.size(); ++I) {
    if (I)
      S += '\n';
    S += printKernel(M.Kernels[I]);
  }
  return S;
}

std::string kiln::printOperationSummary(const IRKernel &K, const Operation &Op,
                                        size_t MaxWidth) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  Printer(K, OS).printOperation(Op);
  auto [First, Rest] = llvm::StringRef(S).split('\n');
  std::string Line = First.str();
  if (!Rest.empty())
    Line += " ... }";
  if (Line.size() > MaxWidth) {
    size_t Cut = MaxWidth > 3 ? MaxWidth - 3 : 0;
    // Names may hold UTF-8: never cut inside a character.
    while (Cut > 0 && (static_cast<unsigned char>(Line[Cut]) & 0xC0) == 0x80)
      --Cut;
    Line.resize(Cut);
    Line += "...";
  }
  return Line;
}

//===- Lexer.h - Tokens of the Kiln IR text form ----------------*- C++ -*-===//
//
// Private to lib/IR. Splits a `.kiln` buffer into tokens with 1-based line and
// column positions. Never reads past the buffer; any byte it does not expect
// (NUL, non-ASCII, stray punctuation) becomes an Error token.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_IR_LEXER_H
#define KILN_LIB_IR_LEXER_H

#include "kiln/IR/Operation.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln {

enum class TokenKind : uint8_t {
  Eof,
  Error,     ///< Text is the message
  Word,      ///< keywords, op names, types, literals: [A-Za-z0-9_.+-]+
  ValueName, ///< `%name`; Text is the name without '%'
  GlobalName,///< `@name`; Text is the name without '@'
  String,    ///< `"..."`; Text is as written, Decoded its bytes
  LParen,
  RParen,
  LBrace,
  RBrace,
  LSquare,
  RSquare,
  Less,
  Greater,
  Comma,
  Colon,
  Equal,
};

struct Token {
  TokenKind Kind = TokenKind::Eof;
  llvm::StringRef Text;
  std::string Message; ///< Error tokens only
  std::string Decoded; ///< String tokens only: the bytes, escapes replaced
  SourceLoc Loc;
};

/// Whether \p C may appear in a `%name` or `@name`.
bool isNameChar(char C);

class Lexer {
public:
  explicit Lexer(llvm::StringRef Buffer) : Buf(Buffer) {}
  /// The next token; Eof forever once the buffer is exhausted.
  Token next();

private:
  char peek(size_t Ahead = 0) const {
    return Pos + Ahead < Buf.size() ? Buf[Pos + Ahead] : '\0';
  }
  bool atEnd() const { return Pos >= Buf.size(); }
  void advance();
  void skipSpaceAndComments();
  Token make(TokenKind Kind, size_t Begin, SourceLoc Loc) const;
  /// A string literal, at its opening quote (docs/LangRef.md §14).
  Token lexString(size_t Begin, SourceLoc Loc);

  llvm::StringRef Buf;
  size_t Pos = 0;
  uint32_t Line = 1;
  uint32_t Col = 1;
};

/// `'c'` for a printable character, `'\xNN'` otherwise (for diagnostics).
std::string describeChar(char C);

} // namespace kiln

#endif // KILN_LIB_IR_LEXER_H

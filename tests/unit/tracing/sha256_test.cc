#include "tracing/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace sparktrace::tracing {
namespace {

struct Vector {
  std::string message;
  std::string digest_hex;
};

// FIPS 180-2, Appendix B (and the NIST CAVP examples).
TEST(Sha256, NistVectors) {
  const Vector kVectors[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopq"
       "rstn"
       "opqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
  };
  for (const Vector& vector : kVectors) {
    EXPECT_EQ(ToHex(Sha256::Hash(vector.message)), vector.digest_hex) << "message: " << vector.message;
  }
}

TEST(Sha256, OneMillionA) {
  const std::string kExpected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  EXPECT_EQ(ToHex(Sha256::Hash(std::string(1'000'000, 'a'))), kExpected);

  // The same message fed in uneven pieces that straddle block boundaries.
  Sha256 hasher;
  const std::string piece(997, 'a');
  std::size_t fed = 0;
  while (fed + piece.size() <= 1'000'000) {
    hasher.Update(piece);
    fed += piece.size();
  }
  hasher.Update(std::string(1'000'000 - fed, 'a'));
  EXPECT_EQ(ToHex(hasher.Finish()), kExpected);
}

// Lengths around the padding boundaries (55 leaves room for the length in one block, 56 does not);
// digests from an independent implementation (Python's hashlib).
TEST(Sha256, PaddingBoundaries) {
  const std::pair<std::size_t, std::string> kCases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
      {128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"},
  };
  for (const auto& [length, digest_hex] : kCases) {
    EXPECT_EQ(ToHex(Sha256::Hash(std::string(length, 'a'))), digest_hex) << "length " << length;
  }
}

TEST(Sha256, AnySplitEqualsOneShot) {
  std::string message;
  for (int i = 0; i < 200; ++i) message += static_cast<char>(i * 7 + 3);
  const Sha256Digest expected = Sha256::Hash(message);
  for (std::size_t split = 0; split <= message.size(); ++split) {
    Sha256 hasher;
    hasher.Update(std::string_view(message).substr(0, split));
    hasher.Update(std::string_view(message).substr(split));
    EXPECT_EQ(hasher.Finish(), expected) << "split at " << split;
  }
}

TEST(Sha256, FinishResetsForTheNextMessage) {
  Sha256 hasher;
  hasher.Update("ab");
  hasher.Update("c");
  const Sha256Digest first = hasher.Finish();
  hasher.Update("abc");
  EXPECT_EQ(hasher.Finish(), first);
  EXPECT_EQ(ToHex(hasher.Finish()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

}  // namespace
}  // namespace sparktrace::tracing

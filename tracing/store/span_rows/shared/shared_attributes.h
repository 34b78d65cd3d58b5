#pragma once
// The shared form of a span's attributes in both stores: what a call repeats from its client,
// connection, session and Airflow task (the shareable keys, compact_attribute_dictionary.h) is kept
// once, as an attribute set of its own row, and the span's row holds the set's id and the rest. A
// Config call's shareable attributes (session and server-side session ids, user, client type, server
// and peer address, RPC system and service) are ~95 of its ~135 bytes of attributes.
//
// Exact: a row reads back to the attributes written, in their order. A set holds each shareable
// attribute with its position in the span's list; the span's own part holds the others in order.
// A span with a repeated key, or fewer than two shareable attributes, keeps the plain compact form
// (compact_attributes.h, whose rule for repeated keys is AttributesToWrite's).
//
// Layouts (varints and attributes as compact_attributes.h writes them):
//   span row: kSharedAttributesFormat, varint set id, then its other attributes as the compact body
//   set:      kAttributeSetFormat, then per shareable attribute: varint position, key, value
//
// Pure functions, but for the reads' AttributeSetSource; no exceptions escape them (std::bad_alloc aside).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "tracing/span.h"

namespace sparktrace::tracing::store {

inline constexpr unsigned char kSharedAttributesFormat = 0x02;
inline constexpr unsigned char kAttributeSetFormat = 0x03;

// Splits `attributes`: the bytes of the set they would share into `set`, the compact body of the
// others into `own`. False when they keep the plain compact form (then `set` and `own` hold nothing of
// use). A span alone, as a SharedAttributeSplitter without a span before splits it; a writer keeps
// one splitter instead.
bool SplitSharedAttributes(const std::vector<Attribute>& attributes, std::string& set, std::string& own);

// SplitSharedAttributes with a memory of the span before, for a writer. A session's calls repeat their
// keys, in the same order: when a span's keys are the span before's, so are which of them are
// shareable, their dictionary codes and whether any repeats, and these are not looked up again. And
// they repeat their shareable attributes: when a span's are the span before's (the same positions,
// keys and values, doubles bit for bit), so are the set's bytes, which are then kept, not encoded
// again. Together these were a fifth of the SQLite writer's instructions for a call per trace. Gives,
// span after span, what SplitSharedAttributes gives each span alone. Threads: one writer's.
class SharedAttributeSplitter {
 public:
  // As SplitSharedAttributes, into set() and own().
  bool Split(const std::vector<Attribute>& attributes);
  const std::string& set() const { return set_; }
  const std::string& own() const { return own_; }

 private:
  // What the keys of the span before say, position by position.
  struct KeyFacts {
    bool shareable = false;
    std::optional<std::uint32_t> code;  // CompactKeyCode
  };
  // Brings keys_, facts_ and unique_ to `attributes`' keys, looking them up only when they changed.
  void LearnKeys(const std::vector<Attribute>& attributes);

  std::string set_;
  std::string own_;
  // The shareable attributes set_ holds, with their positions; none before the first Split.
  std::vector<std::pair<std::size_t, Attribute>> in_set_;
  std::vector<std::string> keys_;
  std::vector<KeyFacts> facts_;
  bool unique_ = true;  // no key of keys_ repeats
};

// Appends a span row in the shared form: its set's id and the own body SplitSharedAttributes gave.
void AppendSharedAttributes(std::string& out, std::uint64_t set_id, std::string_view own);

// The set id a row in the shared form names; nullopt for any other form or a truncated id.
std::optional<std::uint64_t> SharedAttributesSetId(std::string_view bytes);

// Where reads find a set's bytes by its id: kNotFound when there is none, another error when the
// lookup failed. The SQLite store's is sqlite/rows/sqlite_attribute_sets.h; the PostgreSQL store's
// reads join each row's set (postgres/postgres_span_columns.cc).
class AttributeSetSource {
 public:
  virtual ~AttributeSetSource() = default;
  virtual Result<std::string> AttributeSetBytes(std::uint64_t set_id) = 0;
};

// The error of a read whose row names a set that is not in the store.
Error AttributeSetMissing(std::uint64_t set_id);

// A row's attributes in the compact or the shared form (`sets` may be null when the row is not
// shared). kInternal for a malformed row or set, kNotFound (naming the set) for a set that is gone.
Result<std::vector<Attribute>> ReadCompactOrSharedAttributes(std::string_view bytes,
                                                             AttributeSetSource* sets);

// The value of `key` in a row in the compact or the shared form (nullopt: absent, or a malformed row).
// A row's set is read only for a shareable key: the own part of a row holds every other.
Result<std::optional<AttributeValue>> FindCompactOrSharedAttribute(std::string_view bytes,
                                                                   std::string_view key,
                                                                   AttributeSetSource* sets);

}  // namespace sparktrace::tracing::store

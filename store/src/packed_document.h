#pragma once
// How the store keeps a large canonical document (a proposal document: every
// path a plugin proposed, about 300 bytes each, tens of megabytes at 100,000
// paths): as one zstd frame. The documents repeat their keys and, for the
// paths that do not change, each digest twice, so a fast level keeps about an
// eighth of the bytes, and writing them (WAL, fsync, checkpoint) was most of
// what storing cost (docs/spec/store-schema.md, schema version 10).
//
// A stored value that does not begin with zstd's frame magic is the document
// itself, as every row before schema version 10 holds it: a canonical JSON
// document begins with `{`, never with the magic, so the two cannot be
// confused.

#include <cstddef>
#include <string>
#include <string_view>

#include "dot/base/result.h"

namespace dot::store::detail {

// One zstd frame of `document`, its size written in the frame header.
// Errors: Code::Store kind "packed_document" if zstd fails (out of memory).
Result<std::string> pack_document(std::string_view document);

// The document a stored value holds: the value itself when it is not a zstd
// frame; otherwise exactly one frame whose header declares its size, at most
// `max_bytes` and not zero, expanded to exactly that size. Errors: Code::Store
// kind "packed_document" naming what is wrong (several frames, no declared
// size, a size over `max_bytes`, a corrupt or truncated frame); nothing is
// allocated beyond `max_bytes`.
Result<std::string> unpack_document(std::string_view stored, std::size_t max_bytes);

}  // namespace dot::store::detail

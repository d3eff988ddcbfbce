// FarmCodec<AtlasPartWalk> (declared in checker/drivers/atlas_walk.h): how a
// walked part of the atlas travels between MPI ranks.
#include <type_traits>

#include "checker/drivers/atlas_walk.h"

namespace dtr {

// Atlas intervals travel as their bytes.
static_assert(std::is_trivially_copyable_v<AtlasInterval>);

void FarmCodec<AtlasPartWalk>::Encode(const AtlasPartWalk& walk, ByteWriter& w) {
  w.PutVector(walk.pieces);
  w.Put<uint8_t>(walk.complete);
}

AtlasPartWalk FarmCodec<AtlasPartWalk>::Decode(ByteReader& r) {
  AtlasPartWalk walk;
  walk.pieces = r.GetVector<AtlasInterval>();
  walk.complete = r.Get<uint8_t>() != 0;
  return walk;
}

}  // namespace dtr

// One breakpoint of a piecewise constant function: the function takes value v
// on [t, next t).
#pragma once

namespace mpcf {

template <typename Tt, typename Tv>
struct SimplePoint {
  Tt t;
  Tv v;
};

}  // namespace mpcf

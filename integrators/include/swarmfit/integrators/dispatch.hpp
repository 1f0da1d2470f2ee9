// Runtime number of bodies -> compile-time specialisation (2..kMaxBodies).
#pragma once

#include <stdexcept>
#include <type_traits>

namespace swarmfit {

template <class F>
decltype(auto) dispatch_bodies(int num_bodies, F&& f) {
  switch (num_bodies) {
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 6: return f(std::integral_constant<int, 6>{});
    case 7: return f(std::integral_constant<int, 7>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 9: return f(std::integral_constant<int, 9>{});
    case 10: return f(std::integral_constant<int, 10>{});
    case 11: return f(std::integral_constant<int, 11>{});
    case 12: return f(std::integral_constant<int, 12>{});
    case 13: return f(std::integral_constant<int, 13>{});
    case 14: return f(std::integral_constant<int, 14>{});
    case 15: return f(std::integral_constant<int, 15>{});
    case 16: return f(std::integral_constant<int, 16>{});
    default: throw std::invalid_argument("number of bodies must be between 2 and 16");
  }
}

}  // namespace swarmfit

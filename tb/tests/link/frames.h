// Test frames between two fixed endpoints (02:..:01 / 10.0.0.1 -> 02:..:02 /
// 10.0.0.2), shared by the link tests and the link benchmark. No SystemC here:
// tests without sc_main include it too.
#pragma once

#include <cstdint>

#include "packet/build.h"

namespace rocesim::testkit {

inline packet::EthSpec test_eth(bool vlan = false, uint8_t pcp = 0) {
  packet::EthSpec eth;
  eth.dst = 0x020000000002ull;
  eth.src = 0x020000000001ull;
  eth.vlan = vlan;
  eth.pcp = pcp;
  return eth;
}

inline packet::Ipv4Spec test_ip() {
  packet::Ipv4Spec ip;
  ip.src = 0x0a000001;
  ip.dst = 0x0a000002;
  return ip;
}

}  // namespace rocesim::testkit

// A small VCD reader for the waveform tests: the files fst2vcd (GTKWave's
// own FST reader, independent of rocesim's writer) prints, and rocesim's VCD.
// Signals by full name ("sw0.p16.q3.depth_bytes", the range dropped), each
// with its changes in file order as (time ps, value).
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace wavetest {

struct Vcd {
  std::string timescale;
  std::map<std::string, std::string> id_of;                            // full name -> identifier
  std::map<std::string, uint32_t> bits_of;                             // full name -> width
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> changes;  // identifier -> changes
  std::vector<uint64_t> times;                                         // every #time, in order
  std::string error;

  const std::vector<std::pair<uint64_t, uint64_t>>& of(const std::string& name) const {
    static const std::vector<std::pair<uint64_t, uint64_t>> none;
    auto it = id_of.find(name);
    if (it == id_of.end()) return none;
    auto c = changes.find(it->second);
    return c == changes.end() ? none : c->second;
  }
  bool has(const std::string& name) const { return id_of.count(name) != 0; }
  // The value at t: the last change at or before t (after every change at t).
  bool at(const std::string& name, uint64_t t, uint64_t& v) const {
    bool found = false;
    for (const auto& [ct, cv] : of(name)) {
      if (ct > t) break;
      v = cv;
      found = true;
    }
    return found;
  }
  // The value just before t (before any change at t).
  bool before(const std::string& name, uint64_t t, uint64_t& v) const {
    bool found = false;
    for (const auto& [ct, cv] : of(name)) {
      if (ct >= t) break;
      v = cv;
      found = true;
    }
    return found;
  }
};

inline Vcd parse_vcd(const std::string& text) {
  Vcd v;
  std::istringstream in(text);
  std::string tok;
  std::vector<std::string> scope;
  bool defs = true;
  uint64_t t = 0;
  while (in >> tok) {
    if (defs) {
      if (tok == "$timescale") {
        std::string x;
        while (in >> x && x != "$end") v.timescale += x;
      } else if (tok == "$scope") {
        std::string kind, name, end;
        in >> kind >> name >> end;
        scope.push_back(name);
      } else if (tok == "$upscope") {
        std::string end;
        in >> end;
        if (!scope.empty()) scope.pop_back();
      } else if (tok == "$var") {
        std::string type, id, name, x;
        uint32_t bits = 0;
        in >> type >> bits >> id >> name;
        while (in >> x && x != "$end") {}  // an optional [msb:lsb]
        std::string full;
        for (const std::string& s : scope) full += s + ".";
        v.id_of[full + name] = id;
        v.bits_of[full + name] = bits;
      } else if (tok == "$enddefinitions") {
        std::string end;
        in >> end;
        defs = false;
      } else if (tok[0] == '$') {
        std::string x;
        if (tok != "$end")
          while (in >> x && x != "$end") {}
      }
      continue;
    }
    if (tok == "$dumpvars" || tok == "$end" || tok == "$dumpon" || tok == "$dumpoff") continue;
    if (tok[0] == '#') {
      t = std::stoull(tok.substr(1));
      v.times.push_back(t);
    } else if (tok[0] == 'b' || tok[0] == 'B') {
      std::string id;
      in >> id;
      uint64_t x = 0;
      for (size_t k = 1; k < tok.size(); ++k) x = x << 1 | (tok[k] == '1');
      v.changes[id].emplace_back(t, x);
    } else if (tok[0] == '0' || tok[0] == '1') {
      v.changes[tok.substr(1)].emplace_back(t, tok[0] == '1');
    } else {
      v.error = "unexpected token '" + tok + "'";
      return v;
    }
  }
  return v;
}

}  // namespace wavetest

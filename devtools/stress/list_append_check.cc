// SPDX-License-Identifier: Apache-2.0
// CheckListAppend (list_append.h).
#include <algorithm>
#include <deque>
#include <functional>
#include <set>

#include "devtools/stress/list_append.h"

namespace blobtable::stress {
namespace {

using Lists = std::map<std::string, std::vector<std::string>>;

std::vector<std::string> ListValue(const nlohmann::json& v) {
  std::vector<std::string> out;
  if (v.is_array())
    for (const auto& x : v)
      if (x.is_string()) out.push_back(x.get<std::string>());
  return out;
}

bool Read(const MicroOp& m) { return m.kind == "r" && m.value.is_array(); }

// One node of the dependency graph: an operation, or one row of a query.
struct Node {
  size_t op;
  int mop = -1;  // a query's row; -1: the whole operation
};

class Checker {
 public:
  Checker(const std::vector<Op>& h, const Lists& final_state) : h_(h), final_(final_state) {}

  std::string Run() {
    for (size_t i = 0; i < h_.size(); ++i)
      for (const MicroOp& m : h_[i].mops)
        if (m.kind == "a" && m.value.is_string())
          append_of_[{m.key, m.value.get<std::string>()}] = i;
    for (const auto& [key, list] : final_) {
      for (size_t p = 0; p < list.size(); ++p) pos_[{key, list[p]}] = p;
      if (auto bad = CheckList(key, list, "the final state")) return *bad;
    }
    // A read that is a prefix of its final list (checked above) holds no
    // duplicate, invented or aborted element: only the others are examined
    // element by element, to say what is wrong with them.
    for (const Op& op : h_)
      if (op.type == OpType::kOk)
        for (const MicroOp& m : op.mops)
          if (Read(m) && !IsPrefix(m))
            if (auto bad = CheckList(m.key, ListValue(m.value), op.Describe())) return *bad;
    if (auto bad = CheckAppendsLanded()) return *bad;
    if (auto bad = CheckPrefixesAndRealTime()) return *bad;
    return CheckCycles();
  }

 private:
  static std::string Violation(const std::string& what, const std::vector<const Op*>& ops) {
    std::string s = what;
    for (const Op* op : ops) s += "\n    " + op->Describe();
    return s;
  }

  bool IsPrefix(const MicroOp& read) const {
    auto fin = final_.find(read.key);
    if (fin == final_.end() || read.value.size() > fin->second.size()) return false;
    size_t i = 0;
    for (const auto& x : read.value)
      if (!x.is_string() || x.get_ref<const std::string&>() != fin->second[i++]) return false;
    return true;
  }

  // Duplicates, elements nobody appended, elements of failed appends.
  std::optional<std::string> CheckList(const std::string& key, const std::vector<std::string>& list,
                                       const std::string& where) {
    std::set<std::string> seen;
    for (const std::string& x : list) {
      if (!seen.insert(x).second)
        return "duplicate: '" + x + "' twice in key " + key + " in " + where;
      auto it = append_of_.find({key, x});
      if (it == append_of_.end())
        return "invented: '" + x + "' in key " + key + " in " + where + " was never appended to it";
      if (h_[it->second].type == OpType::kFail)
        return Violation("aborted read: '" + x + "' in key " + key + " in " + where +
                             ", appended by an operation that failed",
                         {&h_[it->second]});
    }
    return std::nullopt;
  }

  // Acknowledged appends are in the final state; unknown ones wholly or not.
  std::optional<std::string> CheckAppendsLanded() {
    for (size_t i = 0; i < h_.size(); ++i) {
      const Op& op = h_[i];
      int landed = 0, appends = 0;
      for (const MicroOp& m : op.mops) {
        if (m.kind != "a" || !m.value.is_string()) continue;
        ++appends;
        const bool in = pos_.count({m.key, m.value.get<std::string>()}) != 0;
        landed += in;
        if (op.type == OpType::kOk && !in)
          return Violation("lost: the acknowledged append of '" + m.value.get<std::string>() +
                               "' to " + m.key + " is not in the final state",
                           {&op});
      }
      if (op.type == OpType::kInfo && landed != 0 && landed != appends)
        return Violation("not atomic: " + std::to_string(landed) + " of the " +
                             std::to_string(appends) +
                             " appends of a transaction whose outcome was unknown landed",
                         {&op});
      if (op.type == OpType::kOk || (op.type == OpType::kInfo && landed > 0)) committed_.insert(i);
    }
    return std::nullopt;
  }

  // Reads are prefixes of the final list and hold every acknowledged append
  // that ended before they began.
  std::optional<std::string> CheckPrefixesAndRealTime() {
    // Per key: acknowledged appends by end time, with the furthest position
    // reached so far.
    std::map<std::string, std::vector<std::pair<uint64_t, size_t>>> ended;  // end -> pos
    for (size_t i = 0; i < h_.size(); ++i)
      if (h_[i].type == OpType::kOk)
        for (const MicroOp& m : h_[i].mops)
          if (m.kind == "a" && m.value.is_string())
            ended[m.key].push_back({h_[i].end, pos_.at({m.key, m.value.get<std::string>()})});
    // Sorted by end, each position then the furthest reached by that end.
    for (auto& [key, v] : ended) {
      std::sort(v.begin(), v.end());
      for (size_t i = 1; i < v.size(); ++i) v[i].second = std::max(v[i].second, v[i - 1].second);
    }
    for (const Op& op : h_) {
      if (op.type != OpType::kOk) continue;
      for (const MicroOp& m : op.mops) {
        if (!Read(m)) continue;
        const std::vector<std::string>& fin = final_.at(m.key);
        if (!IsPrefix(m))
          return Violation("not a prefix: a read of " + m.key +
                               " is not a prefix of its final "
                               "list " +
                               nlohmann::json(fin).dump(),
                           {&op});
        const size_t read_length = m.value.size();
        const size_t need = Needed(ended[m.key], op.start);
        if (read_length < need)
          return Violation("stale read: a read of " + m.key + " misses '" + fin[need - 1] +
                               "', whose append was acknowledged before the read began",
                           {&h_[append_of_.at({m.key, fin[need - 1]})], &op});
      }
    }
    return std::nullopt;
  }

  // How long a read that began at `start` must be: past every position an
  // acknowledged append reached before it (`ended`: by end time, with the
  // furthest position so far).
  static size_t Needed(const std::vector<std::pair<uint64_t, size_t>>& ended, uint64_t start) {
    auto it = std::lower_bound(ended.begin(), ended.end(), std::make_pair(start, size_t{0}));
    return it == ended.begin() ? 0 : std::prev(it)->second + 1;
  }

  // Serializability: no cycle of ww, wr and rw edges among committed nodes.
  std::string CheckCycles() {
    std::vector<Node> nodes;
    std::map<std::pair<size_t, int>, size_t> id;
    auto node_of = [&](size_t op, int mop) {
      auto [it, added] = id.emplace(std::make_pair(op, mop), nodes.size());
      if (added) nodes.push_back({op, mop});
      return it->second;
    };
    std::vector<std::vector<std::pair<size_t, std::string>>> edges;
    auto edge = [&](size_t a, size_t b, const std::string& why) {
      if (a == b) return;
      if (edges.size() < nodes.size()) edges.resize(nodes.size());
      edges[a].push_back({b, why});
    };
    // The writer of each final position.
    std::map<std::string, std::vector<size_t>> writer;
    for (const auto& [key, list] : final_)
      for (const std::string& x : list) writer[key].push_back(node_of(append_of_.at({key, x}), -1));
    for (const auto& [key, w] : writer)
      for (size_t p = 0; p + 1 < w.size(); ++p) edge(w[p], w[p + 1], "ww " + key);
    for (size_t i : committed_) {
      const Op& op = h_[i];
      for (size_t n = 0; n < op.mops.size(); ++n) {
        const MicroOp& m = op.mops[n];
        if (!Read(m)) continue;
        const size_t reader = node_of(i, op.f == "query" ? static_cast<int>(n) : -1);
        const size_t len = ListValue(m.value).size();
        const auto& w = writer[m.key];
        if (len > 0) edge(w[len - 1], reader, "wr " + m.key);
        if (len < w.size()) edge(reader, w[len], "rw " + m.key);
      }
    }
    edges.resize(nodes.size());
    std::vector<size_t> cycle = ShortestCycle(edges);
    if (cycle.empty()) return "";
    std::string s = "not serializable: a cycle of " + std::to_string(cycle.size()) +
                    " dependencies among committed operations:";
    for (size_t k = 0; k < cycle.size(); ++k) {
      const size_t a = cycle[k], b = cycle[(k + 1) % cycle.size()];
      std::string why;
      for (const auto& [to, w] : edges[a])
        if (to == b) why = w;
      s += "\n    " + h_[nodes[a].op].Describe() + "\n      --" + why + "-->";
    }
    return s;
  }

  // The shortest cycle through any node (BFS from each node of the graph
  // that can reach itself); empty if there is none.
  static std::vector<size_t> ShortestCycle(
      const std::vector<std::vector<std::pair<size_t, std::string>>>& edges) {
    const size_t n = edges.size();
    std::vector<size_t> best;
    // Only nodes on some cycle matter: those in a strongly connected
    // component of more than one node (edges never loop on a node).
    std::vector<int> comp = Components(edges);
    std::vector<int> size(n, 0);
    for (size_t v = 0; v < n; ++v) ++size[comp[v]];
    for (size_t start = 0; start < n; ++start) {
      if (size[comp[start]] < 2) continue;
      std::vector<size_t> parent(n, SIZE_MAX);
      std::deque<size_t> queue = {start};
      parent[start] = start;
      bool closed = false;
      while (!queue.empty() && !closed) {
        const size_t v = queue.front();
        queue.pop_front();
        for (const auto& [w, why] : edges[v]) {
          if (w == start) {
            std::vector<size_t> cycle;
            for (size_t u = v; u != start; u = parent[u]) cycle.push_back(u);
            cycle.push_back(start);
            std::reverse(cycle.begin(), cycle.end());
            if (best.empty() || cycle.size() < best.size()) best = cycle;
            closed = true;
            break;
          }
          if (parent[w] == SIZE_MAX && comp[w] == comp[start]) {
            parent[w] = v;
            queue.push_back(w);
          }
        }
      }
      if (best.size() == 2) break;  // none is shorter
    }
    return best;
  }

  // Strongly connected components (Tarjan's, without recursion).
  static std::vector<int> Components(
      const std::vector<std::vector<std::pair<size_t, std::string>>>& edges) {
    const size_t n = edges.size();
    std::vector<int> index(n, -1), low(n, 0), comp(n, -1);
    std::vector<bool> on_stack(n, false);
    std::vector<size_t> stack;
    int counter = 0, comps = 0;
    for (size_t root = 0; root < n; ++root) {
      if (index[root] != -1) continue;
      std::vector<std::pair<size_t, size_t>> work = {{root, 0}};  // node, next edge
      while (!work.empty()) {
        auto& [v, e] = work.back();
        if (e == 0) {
          index[v] = low[v] = counter++;
          stack.push_back(v);
          on_stack[v] = true;
        }
        if (e < edges[v].size()) {
          const size_t w = edges[v][e++].first;
          if (index[w] == -1)
            work.push_back({w, 0});
          else if (on_stack[w])
            low[v] = std::min(low[v], index[w]);
          continue;
        }
        if (low[v] == index[v]) {
          for (size_t w = SIZE_MAX; w != v;) {
            w = stack.back();
            stack.pop_back();
            on_stack[w] = false;
            comp[w] = comps;
          }
          ++comps;
        }
        const size_t done = v;
        work.pop_back();
        if (!work.empty()) low[work.back().first] = std::min(low[work.back().first], low[done]);
      }
    }
    return comp;
  }

  const std::vector<Op>& h_;
  const Lists& final_;
  std::map<std::pair<std::string, std::string>, size_t> append_of_;  // (key, element) -> op
  std::map<std::pair<std::string, std::string>, size_t> pos_;        // final position
  std::set<size_t> committed_;
};

}  // namespace

std::string CheckListAppend(const std::vector<Op>& history, const Lists& final_state) {
  return Checker(history, final_state).Run();
}

}  // namespace blobtable::stress

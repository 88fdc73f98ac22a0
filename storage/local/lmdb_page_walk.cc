// SPDX-License-Identifier: Apache-2.0
#include "storage/local/lmdb_page_walk.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

namespace blobtable::internal {
namespace {

// LMDB 0.9's on-disk layout (mdb.c): page flags, node flags, sizes.
constexpr uint16_t kBranch = 0x01, kLeaf = 0x02, kOverflow = 0x04, kLeaf2 = 0x20;
constexpr uint16_t kBigData = 0x01, kSubData = 0x02;
constexpr uint16_t kIntegerKey = 0x08;  // MDB_INTEGERKEY, a database's flag
constexpr size_t kPageHeader = 16, kNodeHeader = 8, kDbSize = 48;
constexpr uint32_t kMagic = 0xBEEFC0DE;
constexpr uint64_t kNoRoot = ~uint64_t{0};
constexpr int kMaxDepth = 64;

uint16_t U16(std::string_view b, size_t at) {
  uint16_t v;
  std::memcpy(&v, b.data() + at, 2);
  return v;
}
uint32_t U32(std::string_view b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
uint64_t U64(std::string_view b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

// MDB_db: pad, flags, depth, branch/leaf/overflow page counts, entries, root.
struct Db {
  uint32_t pad = 0;
  uint16_t flags = 0, depth = 0;
  uint64_t branch_pages = 0, leaf_pages = 0, overflow_pages = 0, entries = 0;
  uint64_t root = kNoRoot;
};
Db DbAt(std::string_view b, size_t at) {
  return Db{U32(b, at),      U16(b, at + 4),  U16(b, at + 6),  U64(b, at + 8),
            U64(b, at + 16), U64(b, at + 24), U64(b, at + 32), U64(b, at + 40)};
}

// What a walk of one tree found, to hold against its MDB_db record.
struct TreeCount {
  uint64_t branch_pages = 0, leaf_pages = 0, overflow_pages = 0, entries = 0;
  int leaf_level = -1;  // every leaf of a B-tree is at the same level
};

// The keys a subtree's keys must lie within: [low, high), either open.
struct Bounds {
  std::optional<std::string_view> low, high;
};

// A page size LMDB can have: a power of two, 512 to 64 KiB.
bool SoundPageSize(uint64_t s) { return s >= 512 && s <= 65536 && (s & (s - 1)) == 0; }

// LMDB's default key order (mdb_cmp_memn): bytes, then length.
int CompareKeys(std::string_view a, std::string_view b) {
  const int c = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
  if (c != 0) return c;
  return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

// MDB_meta after the page header: magic, version, address, map size,
// dbs[FREE, MAIN], last page, txnid.
struct Meta {
  bool valid = false;
  Db free_db, main_db;
  uint64_t last_page = 0, txnid = 0;
};
Meta MetaAt(std::string_view page) {
  Meta m;
  if (page.size() < kPageHeader + 24 + 2 * kDbSize + 16) return m;
  const size_t at = kPageHeader;
  m.valid = U32(page, at) == kMagic && U32(page, at + 4) == 1;
  m.free_db = DbAt(page, at + 24);
  m.main_db = DbAt(page, at + 24 + kDbSize);
  m.last_page = U64(page, at + 24 + 2 * kDbSize);
  m.txnid = U64(page, at + 24 + 2 * kDbSize + 8);
  return m;
}

bool ConsecutiveTxnIds(uint64_t t0, uint64_t t1) {
  if (t0 == 0 && t1 == 0) return true;
  return t0 % 2 == 0 && t1 % 2 == 1 && (t1 == t0 + 1 || t0 == t1 + 1);
}

class Walker {
 public:
  Walker(int fd, uint64_t file_size, uint64_t txnid)
      : fd_(fd), file_size_(file_size), txnid_(txnid) {}

  std::string Run() {
    std::string first(4096, '\0');
    if (!ReadAt(0, &first)) return "cannot read its first meta page";
    const Meta m0 = MetaAt(first);
    page_size_ = m0.free_db.pad;  // LMDB keeps the page size there
    if (!m0.valid || !SoundPageSize(page_size_)) return "its first meta page is damaged";
    std::string second;
    if (std::string why = Page(1, &second); !why.empty()) return why;
    const Meta m1 = MetaAt(second);
    if (!m1.valid) return "its second meta page is damaged";
    if (m0.txnid != txnid_ && m1.txnid != txnid_) return "";  // no verdict: committed over
    const Meta& m = m1.txnid == txnid_ ? m1 : m0;
    // The file may end before the last page counted (pages a commit
    // allocated at the end and freed again are never written): every page
    // followed must lie inside it.
    last_page_ = m.last_page;
    if (std::string why = Tree(m.free_db, true, "the free list"); !why.empty()) return why;
    if (std::string why = Tree(m.main_db, false, "the main database"); !why.empty()) return why;
    return Accounted();
  }

 private:
  bool ReadAt(uint64_t offset, std::string* out) {
    size_t done = 0;
    while (done < out->size()) {
      const ssize_t n =
          pread(fd_, out->data() + done, out->size() - done, static_cast<off_t>(offset + done));
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // Page `pgno`, which must lie inside the file and the last commit's
  // pages and say it is that page.
  std::string Page(uint64_t pgno, std::string* page) {
    const std::string where = "page " + std::to_string(pgno);
    if ((pgno + 1) * page_size_ > file_size_ || (last_page_ != 0 && pgno > last_page_))
      return where + " lies past the end of the file";
    page->assign(page_size_, '\0');
    if (!ReadAt(pgno * page_size_, page)) return where + " cannot be read";
    if (U64(*page, 0) != pgno) return where + " says it is page " + std::to_string(U64(*page, 0));
    return "";
  }

  // A whole tree, whose pages, entries and depth must be what its MDB_db
  // record says: a page number flipped to another page (a free one, or one
  // of another tree) leaves pages unreached or counts wrong, and the keys
  // must lie in order (a flipped key byte hides rows from a search).
  std::string Tree(const Db& db, bool free_list, const std::string& what) {
    // The free list is keyed by integers (MDB_INTEGERKEY); every database
    // here is opened with LMDB's defaults. A flag flipped on changes the
    // key order LMDB searches by, and rows vanish from reads.
    if (db.flags != (free_list ? kIntegerKey : 0))
      return what + ": its flags are damaged (" + std::to_string(db.flags) + ")";
    if (db.root == kNoRoot) return "";
    TreeCount count;
    if (std::string why = Node(db.root, free_list, 0, Bounds{}, count); !why.empty()) return why;
    if (count.branch_pages != db.branch_pages || count.leaf_pages != db.leaf_pages ||
        count.overflow_pages != db.overflow_pages || count.entries != db.entries ||
        count.leaf_level + 1 != db.depth)
      return what + " (root page " + std::to_string(db.root) +
             ") is not the tree its record says: " + std::to_string(count.branch_pages) + "/" +
             std::to_string(count.leaf_pages) + "/" + std::to_string(count.overflow_pages) +
             " branch/leaf/overflow pages, " + std::to_string(count.entries) + " entries and " +
             std::to_string(count.leaf_level + 1) + " levels reached, against " +
             std::to_string(db.branch_pages) + "/" + std::to_string(db.leaf_pages) + "/" +
             std::to_string(db.overflow_pages) + ", " + std::to_string(db.entries) + " and " +
             std::to_string(db.depth);
    return "";
  }

  // Every page is a meta page, in use by exactly one tree, or free, once.
  std::string Accounted() const {
    for (uint64_t id : free_)
      if (seen_.count(id) != 0)
        return "page " + std::to_string(id) + " is both in use and on the free list";
    const uint64_t counted = 2 + seen_.size() + free_.size();
    if (counted != last_page_ + 1)
      return std::to_string(last_page_ + 1) + " pages, of which " + std::to_string(counted) +
             " are meta pages, in use or free: " +
             (counted < last_page_ + 1 ? "some are lost" : "some are counted twice");
    return "";
  }

  // A branch or leaf page and everything below it, `level` below the root.
  std::string Node(uint64_t pgno, bool free_list, int level, const Bounds& bounds,
                   TreeCount& count) {
    const std::string where = "page " + std::to_string(pgno);
    if (level >= kMaxDepth) return where + ": the tree is deeper than any LMDB tree";
    if (!seen_.insert(pgno).second) return where + " is reached twice";
    std::string page;
    if (std::string why = Page(pgno, &page); !why.empty()) return why;
    const uint16_t flags = U16(page, 10), lower = U16(page, 12), upper = U16(page, 14);
    if (!(flags & (kBranch | kLeaf)) || (flags & kBranch && flags & kLeaf))
      return where + " is neither a branch nor a leaf";
    if (flags & kLeaf2) return where + " holds fixed-size duplicates, which no database here has";
    if (lower < kPageHeader || lower > upper || upper > page_size_ || (lower - kPageHeader) % 2)
      return where + " has a damaged header";
    const size_t nodes = (lower - kPageHeader) / 2;
    if (nodes == 0 || (flags & kBranch && nodes < 2)) return where + " has too few nodes";
    if (flags & kLeaf) {
      ++count.leaf_pages;
      count.entries += nodes;
      if (count.leaf_level < 0) count.leaf_level = level;
      if (count.leaf_level != level) return where + ": leaves at two depths of one tree";
    } else {
      ++count.branch_pages;
    }
    std::vector<std::string_view> keys(nodes);
    std::vector<std::pair<size_t, size_t>> extents(nodes);  // each node's offset and size
    for (size_t i = 0; i < nodes; ++i) {
      const size_t at = U16(page, kPageHeader + 2 * i);
      if (at < upper || at + kNodeHeader > page_size_) return where + ": a node lies outside it";
      const size_t key_size = U16(page, at + 6);
      if (at + kNodeHeader + key_size > page_size_) return where + ": a key lies outside it";
      keys[i] = std::string_view(page).substr(at + kNodeHeader, key_size);
      size_t on_page = 0;  // a branch node's data is its child's number, in its header
      if (flags & kLeaf)
        on_page = (U16(page, at + 4) & kBigData)
                      ? 8
                      : (uint64_t{U16(page, at)} | uint64_t{U16(page, at + 2)} << 16);
      extents[i] = {at, (kNodeHeader + key_size + on_page + 1) & ~size_t{1}};  // LMDB's EVEN
    }
    if (!Tiled(std::move(extents), upper)) return where + ": its nodes do not tile it";
    // The free list's keys are transaction ids, in integer order; checked
    // in Leaf.
    if (!free_list && !InOrder(keys, flags & kBranch, bounds))
      return where + ": its keys are out of order";
    for (size_t i = 0; i < nodes; ++i) {
      const size_t at = U16(page, kPageHeader + 2 * i);
      std::string why;
      if (flags & kBranch) {
        const Bounds child{i == 0 ? bounds.low : keys[i],
                           i + 1 < nodes ? std::optional(keys[i + 1]) : bounds.high};
        why = Branch(page, at, free_list, level, child, count);
      } else {
        why = Leaf(page, at, free_list, pgno, count);
      }
      if (!why.empty()) return why;
    }
    return "";
  }

  // LMDB packs a page's nodes (offset, size) from its end down to `upper`,
  // no gap, no overlap: a node's size flipped (its key or value grown into
  // the next node's bytes, or shrunk) breaks the tiling even where every
  // node still lies inside the page.
  bool Tiled(std::vector<std::pair<size_t, size_t>> extents, size_t upper) const {
    std::sort(extents.begin(), extents.end());
    size_t end = upper;
    for (const auto& [at, size] : extents) {
      if (at != end) return false;
      end = at + size;
    }
    return end == page_size_;
  }

  // A page's keys ascend, within `bounds` (a branch page's first key is
  // not used).
  static bool InOrder(const std::vector<std::string_view>& keys, bool branch,
                      const Bounds& bounds) {
    for (size_t i = branch ? 1 : 0; i < keys.size(); ++i) {
      const bool ordered =
          (i == 0 || (branch && i == 1) || CompareKeys(keys[i - 1], keys[i]) < 0) &&
          (!bounds.low || CompareKeys(*bounds.low, keys[i]) <= 0) &&
          (!bounds.high || CompareKeys(keys[i], *bounds.high) < 0);
      if (!ordered) return false;
    }
    return true;
  }

  std::string Branch(std::string_view page, size_t at, bool free_list, int level,
                     const Bounds& bounds, TreeCount& count) {
    const uint64_t child = uint64_t{U16(page, at)} | uint64_t{U16(page, at + 2)} << 16 |
                           uint64_t{U16(page, at + 4)} << 32;
    return Node(child, free_list, level + 1, bounds, count);
  }

  std::string Leaf(std::string_view page, size_t at, bool free_list, uint64_t pgno,
                   TreeCount& count) {
    const std::string where = "page " + std::to_string(pgno);
    const uint64_t size = uint64_t{U16(page, at)} | uint64_t{U16(page, at + 2)} << 16;
    const uint16_t flags = U16(page, at + 4);
    const size_t data = at + kNodeHeader + U16(page, at + 6);
    if (data > page_size_) return where + ": a key lies outside it";
    // The free list is keyed by the transaction that freed the pages: one
    // from after the last commit makes LMDB's next commit abort.
    if (free_list && (U16(page, at + 6) != 8 || U64(page, at + kNodeHeader) > txnid_))
      return where + ": a free-list key is damaged";
    if (flags & ~(kBigData | kSubData)) return where + ": a node's flags are damaged";
    if (flags & kBigData) {
      if (data + 8 > page_size_) return where + ": a node lies outside it";
      return Overflow(U64(page, data), size, free_list, count);
    }
    if (data + size > page_size_) return where + ": a value lies outside it";
    const std::string_view value = page.substr(data, size);
    if (free_list) return FreePages(value, where);
    if (flags & kSubData) {
      if (size != kDbSize) return where + ": a named database's record is damaged";
      const std::string name(page.substr(at + kNodeHeader, U16(page, at + 6)));
      return Tree(DbAt(value, 0), false, "database '" + name + "'");
    }
    return "";
  }

  // A value on overflow pages: the run must lie inside the file and hold it.
  std::string Overflow(uint64_t first, uint64_t size, bool free_list, TreeCount& count) {
    const std::string where = "overflow page " + std::to_string(first);
    std::string page;
    if (std::string why = Page(first, &page); !why.empty()) return why;
    const uint32_t pages = U32(page, 12);
    if (!(U16(page, 10) & kOverflow) || pages == 0) return where + " is not an overflow page";
    if ((first + pages) * page_size_ > file_size_ || first + pages - 1 > last_page_)
      return where + ": its run of " + std::to_string(pages) + " pages lies past the file";
    if (size > uint64_t{pages} * page_size_ - kPageHeader)
      return where + ": its value is larger than its pages";
    count.overflow_pages += pages;
    for (uint64_t p = first; p < first + pages; ++p)
      if (!seen_.insert(p).second) return "page " + std::to_string(p) + " is reached twice";
    if (!free_list) return "";
    std::string value(size, '\0');
    if (!ReadAt(first * page_size_ + kPageHeader, &value)) return where + " cannot be read";
    return FreePages(value, where);
  }

  // A free-list record: a count, then that many page numbers.
  std::string FreePages(std::string_view ids, const std::string& where) {
    if (ids.size() < 8) return where + ": a free-list record is damaged";
    const uint64_t n = U64(ids, 0);
    if (n > ids.size() / 8 - 1) return where + ": a free-list record is damaged";
    for (uint64_t i = 1; i <= n; ++i) {
      const uint64_t id = U64(ids, 8 * i);
      if (id > last_page_ || id < 2)
        return where + ": the free list names page " + std::to_string(id) + ", outside the file";
      if (i > 1 && id >= U64(ids, 8 * (i - 1)))  // LMDB keeps each record in descending order
        return where + ": a free-list record is out of order";
      if (!free_.insert(id).second)
        return where + ": the free list names page " + std::to_string(id) + " twice";
    }
    return "";
  }

  const int fd_;
  const uint64_t file_size_, txnid_;
  uint64_t page_size_ = 0, last_page_ = 0;
  std::set<uint64_t> seen_;  // pages in use: every tree's, every overflow run's
  std::set<uint64_t> free_;  // pages the free list names
};

}  // namespace

namespace {

// Both meta pages of the file at `fd` as one read sees them (the first
// page whole, the second up to its meta): their page size first.
struct MetaPair {
  bool read = false;
  Meta m0, m1;
};
MetaPair ReadMetaPair(int fd) {
  MetaPair p;
  std::string page(4096, '\0');
  if (pread(fd, page.data(), page.size(), 0) != 4096) return p;
  p.m0 = MetaAt(page);
  const uint64_t size = p.m0.free_db.pad;
  if (!p.m0.valid || !SoundPageSize(size)) {
    p.read = true;
    return p;
  }
  std::string both(size + 4096, '\0');
  if (pread(fd, both.data(), both.size(), 0) != static_cast<ssize_t>(both.size())) return p;
  p.m0 = MetaAt(both);
  p.m1 = MetaAt(std::string_view(both).substr(size));
  p.read = true;
  return p;
}

std::string JudgeMetaPair(const MetaPair& p) {
  const uint64_t size = p.m0.free_db.pad;
  if (p.m0.valid && !SoundPageSize(size))
    return "its first meta page names page size " + std::to_string(size);
  if (!p.m0.valid || !p.m1.valid) return "";
  if (p.m1.free_db.pad != size)
    return "its meta pages name page sizes " + std::to_string(size) + " and " +
           std::to_string(p.m1.free_db.pad);
  // LMDB writes the meta page of transaction N to page N % 2, so the two
  // hold consecutive numbers, each on its page (both 0 before the first
  // commit). LMDB opens the one with the larger number: a flipped bit
  // there opened an older snapshot, or a copy's empty first one, as if it
  // were the store (the review of issue 57).
  if (!ConsecutiveTxnIds(p.m0.txnid, p.m1.txnid))
    return "its meta pages hold transaction numbers " + std::to_string(p.m0.txnid) + " and " +
           std::to_string(p.m1.txnid) + ", which LMDB never writes (one is damaged)";
  return "";
}

}  // namespace

std::string CheckLmdbMetaPages(const std::string& data_file) {
  const int fd = open(data_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";  // none yet (or unreadable: LMDB says so)
  // Read without LMDB's writer lock: other processes may commit between
  // this read's two pages (a pair two commits apart is then no damage). A
  // verdict of damage stands only when a second read sees the same pair;
  // pairs that keep changing mean writers are committing (LMDB writes one
  // meta page a commit): no verdict.
  std::string why;
  MetaPair last = ReadMetaPair(fd);
  for (int attempt = 0; attempt < 64 && last.read; ++attempt) {
    why = JudgeMetaPair(last);
    if (why.empty()) break;
    const MetaPair again = ReadMetaPair(fd);
    if (again.read && again.m0.txnid == last.m0.txnid && again.m1.txnid == last.m1.txnid &&
        again.m0.free_db.pad == last.m0.free_db.pad && again.m1.free_db.pad == last.m1.free_db.pad)
      break;  // the same pair twice: damage
    why.clear();
    last = again;
  }
  close(fd);
  return why.empty() ? why : data_file + ": " + why;
}

std::string WalkLmdbPages(const std::string& data_file, uint64_t txnid) {
  const int fd = open(data_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "cannot open " + data_file + ": " + std::strerror(errno);
  struct stat st {};
  std::string why = fstat(fd, &st) != 0
                        ? std::string("cannot read its size")
                        : Walker(fd, static_cast<uint64_t>(st.st_size), txnid).Run();
  close(fd);
  return why.empty() ? why : data_file + ": " + why;
}

}  // namespace blobtable::internal

// SPDX-License-Identifier: Apache-2.0
#include <cstdio>

#include "blobtable/entity.h"

namespace blobtable {

std::string_view EdmTypeName(EdmType type) {
  switch (type) {
    case EdmType::kString: return "Edm.String";
    case EdmType::kBinary: return "Edm.Binary";
    case EdmType::kBoolean: return "Edm.Boolean";
    case EdmType::kDateTime: return "Edm.DateTime";
    case EdmType::kDouble: return "Edm.Double";
    case EdmType::kGuid: return "Edm.Guid";
    case EdmType::kInt32: return "Edm.Int32";
    case EdmType::kInt64: return "Edm.Int64";
  }
  return "Edm.Unknown";
}

std::string FormatDateTime(DateTime t) {
  using namespace std::chrono;
  if (!IsValidDateTime(t)) return "(out of range)";  // never stored: validated on the way in
  auto day = floor<days>(t);
  year_month_day ymd{day};
  auto rest = t - day;  // ticks within the day
  int64_t ticks = rest.count();
  int64_t secs = ticks / 10'000'000, frac = ticks % 10'000'000;
  char buf[48];
  snprintf(buf, sizeof(buf), "%04d-%02u-%02uT%02lld:%02lld:%02lld.%07lldZ",
           static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
           static_cast<unsigned>(ymd.day()), static_cast<long long>(secs / 3600),
           static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60),
           static_cast<long long>(frac));
  return buf;
}

Result<DateTime> ParseDateTime(std::string_view text) {
  using namespace std::chrono;
  auto fail = [&] {
    return Status::InvalidArgument("'" + std::string(text) +
                                   "' is not an ISO 8601 UTC date-time such as "
                                   "2024-05-01T12:00:00Z");
  };
  size_t i = 0;
  auto digits = [&](int n, int* out) {
    if (i + n > text.size()) return false;
    int v = 0;
    for (int k = 0; k < n; ++k) {
      char c = text[i + k];
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    i += n;
    *out = v;
    return true;
  };
  auto expect = [&](char c) { return i < text.size() && text[i++] == c; };
  int y, mo, d, h, mi, s;
  if (!digits(4, &y) || !expect('-') || !digits(2, &mo) || !expect('-') || !digits(2, &d) ||
      !expect('T') || !digits(2, &h) || !expect(':') || !digits(2, &mi) || !expect(':') ||
      !digits(2, &s))
    return fail();
  int64_t frac_ticks = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    int n = 0;
    int64_t scale = 1'000'000;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (n < 7) frac_ticks += (text[i] - '0') * scale, scale /= 10;  // beyond 100 ns: dropped
      ++i, ++n;
    }
    if (n == 0) return fail();
  }
  int offset_min = 0;
  if (i < text.size() && text[i] == 'Z') {
    ++i;
  } else if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    int sign = text[i++] == '+' ? 1 : -1, oh, om;
    if (!digits(2, &oh) || !expect(':') || !digits(2, &om) || oh > 23 || om > 59) return fail();
    offset_min = sign * (oh * 60 + om);
  } else {
    return fail();
  }
  if (i != text.size()) return fail();
  year_month_day ymd{year(y), month(static_cast<unsigned>(mo)), day(static_cast<unsigned>(d))};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 59) return fail();
  DateTime t = time_point_cast<Ticks>(sys_days(ymd)) + hours(h) + minutes(mi) + seconds(s) +
               Ticks(frac_ticks) - minutes(offset_min);
  if (!IsValidDateTime(t))
    return Status::InvalidArgument("'" + std::string(text) + "' is outside 1601-9999");
  return t;
}

}  // namespace blobtable

// ISO 8601 formatting and parsing (UTC, proleptic Gregorian calendar).
#include "util/time.h"

#include <cctype>
#include <chrono>
#include <cstdio>

namespace msp {
namespace {

// Days since 1970-01-01 for a civil date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t yy = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp + (mp < 10 ? 3 : -9);
  *y = yy + (*m <= 2);
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int64_t y, unsigned m) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Reads exactly `n` digits at s[*pos].
bool Digits(std::string_view s, size_t* pos, int n, int* out) {
  if (*pos + static_cast<size_t>(n) > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    char c = s[*pos + static_cast<size_t>(i)];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  *pos += static_cast<size_t>(n);
  *out = v;
  return true;
}

}  // namespace

std::string FormatIso8601(TimeMs t) {
  int64_t days = t / kMsPerDay;
  int64_t rem = t % kMsPerDay;
  if (rem < 0) {
    rem += kMsPerDay;
    --days;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  const int64_t secs = rem / 1000;
  if (y < 0 || y > 9999) {  // beyond four digits: as printf writes it
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ",
                  static_cast<long long>(y), m, d, static_cast<long long>(secs / 3600),
                  static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60),
                  static_cast<long long>(rem % 1000));
    return buf;
  }
  // The common case digit by digit (every answer carries several times;
  // snprintf cost ~2 us each).
  char buf[] = "0000-00-00T00:00:00.000Z";
  auto put = [&buf](size_t at, int64_t v, int width) {
    for (int i = width - 1; i >= 0; --i, v /= 10) buf[at + static_cast<size_t>(i)] = static_cast<char>('0' + v % 10);
  };
  put(0, y, 4);
  put(5, m, 2);
  put(8, d, 2);
  put(11, secs / 3600, 2);
  put(14, secs / 60 % 60, 2);
  put(17, secs % 60, 2);
  put(20, rem % 1000, 3);
  return std::string(buf, sizeof buf - 1);
}

Result<TimeMs> ParseIso8601(std::string_view s) {
  auto bad = [&](const char* why) {
    return Status::InvalidArgument("'" + std::string(s) + "' is not an ISO 8601 time (" + why +
                                   "); use e.g. 2026-11-30 or 2026-11-30T10:00:00Z");
  };
  size_t pos = 0;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, ms = 0;
  if (!Digits(s, &pos, 4, &y) || pos >= s.size() || s[pos++] != '-' || !Digits(s, &pos, 2, &mo) ||
      pos >= s.size() || s[pos++] != '-' || !Digits(s, &pos, 2, &d)) {
    return bad("expected YYYY-MM-DD");
  }
  if (mo < 1 || mo > 12) return bad("month out of range");
  if (d < 1 || static_cast<unsigned>(d) > DaysInMonth(y, static_cast<unsigned>(mo))) {
    return bad("day out of range");
  }
  int64_t offset_min = 0;
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ') return bad("expected 'T' after the date");
    ++pos;
    if (!Digits(s, &pos, 2, &h) || pos >= s.size() || s[pos++] != ':' || !Digits(s, &pos, 2, &mi)) {
      return bad("expected HH:MM");
    }
    if (pos < s.size() && s[pos] == ':') {
      ++pos;
      if (!Digits(s, &pos, 2, &sec)) return bad("expected SS");
      if (pos < s.size() && s[pos] == '.') {
        ++pos;
        size_t start = pos;
        int frac = 0, n = 0;
        while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
          if (n < 3) {
            frac = frac * 10 + (s[pos] - '0');
            ++n;
          }
          ++pos;
        }
        if (pos == start) return bad("expected digits after '.'");
        while (n < 3) {
          frac *= 10;
          ++n;
        }
        ms = frac;
      }
    }
    if (h > 23 || mi > 59 || sec > 60) return bad("time of day out of range");
    if (pos < s.size()) {
      char z = s[pos];
      if (z == 'Z' || z == 'z') {
        ++pos;
      } else if (z == '+' || z == '-') {
        ++pos;
        int oh = 0, om = 0;
        if (!Digits(s, &pos, 2, &oh)) return bad("expected zone +HH:MM");
        if (pos < s.size() && s[pos] == ':') ++pos;
        if (!Digits(s, &pos, 2, &om)) return bad("expected zone +HH:MM");
        if (oh > 23 || om > 59) return bad("zone offset out of range");
        offset_min = (oh * 60 + om) * (z == '+' ? 1 : -1);
      } else {
        return bad("unexpected character after the time");
      }
    }
  }
  if (pos != s.size()) return bad("trailing characters");
  const int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return days * kMsPerDay + (static_cast<int64_t>(h) * 3600 + mi * 60 + sec) * 1000 + ms -
         offset_min * 60000;
}

TimeMs WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace msp

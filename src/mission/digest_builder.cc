// Token-budgeted digest packing (see digest_builder.h).
#include "mission/digest_builder.h"

#include <algorithm>

#include "util/utf8.h"

namespace msp {
namespace {

constexpr const char* kEllipsis = "…";

// A candidate digest: which items are shown, and how.
struct Selection {
  std::vector<bool> shown;
  std::vector<bool> excerpt;
  std::vector<std::string> text;  // as shown
};

std::string ItemLines(const DigestItem& item, const std::string& text, bool excerpt) {
  return item.head + text + (excerpt && !item.excerpt_tail.empty() ? item.excerpt_tail : item.tail);
}

class Renderer {
 public:
  Renderer(const DigestLayout& layout, size_t budget, const TokenCounter& counter)
      : layout_(layout), budget_(budget), counter_(counter) {
    display_.resize(layout.items.size());
    for (size_t i = 0; i < display_.size(); ++i) display_[i] = i;
    std::stable_sort(display_.begin(), display_.end(),
                     [&](size_t a, size_t b) { return layout.items[a].order < layout.items[b].order; });
  }

  // The full form of `sel`, with a footer that states its own token count.
  std::string Full(const Selection& sel, DigestTally* tally) const {
    *tally = TallyOf(sel);
    std::vector<std::string> parts;
    if (!layout_.title.empty()) parts.push_back(layout_.title);
    for (size_t s = 0; s < layout_.sections.size(); ++s) {
      std::string block;
      for (size_t i : display_) {
        if (!sel.shown[i] || layout_.items[i].section != s) continue;
        block += "\n";
        block += ItemLines(layout_.items[i], sel.text[i], sel.excerpt[i]);
      }
      if (!block.empty()) parts.push_back(layout_.sections[s] + block);
    }
    return WithFooter(parts, layout_.footer, tally);
  }

  // The footer alone (no title, no sections, no entries).
  std::string FooterOnly(const Selection& none, DigestTally* tally) const {
    *tally = TallyOf(none);
    return WithFooter({}, layout_.short_footer ? layout_.short_footer : layout_.footer, tally);
  }

  bool Fits(const std::string& text) const { return counter_.Count(text) <= budget_; }

 private:
  DigestTally TallyOf(const Selection& sel) const {
    DigestTally t;
    t.budget = budget_;
    for (size_t i = 0; i < sel.shown.size(); ++i) {
      (sel.shown[i] ? t.shown : t.left_out) += 1;
      if (sel.shown[i] && sel.excerpt[i]) t.truncated += 1;
    }
    return t;
  }

  // Joins `parts` and the footer; the footer may state the total token
  // count, which depends on the footer itself: iterate to the fixed point
  // (the count changes only with the number of digits, so two or three
  // rounds settle it).
  std::string WithFooter(const std::vector<std::string>& parts,
                         const std::function<std::string(const DigestTally&)>& footer, DigestTally* tally) const {
    auto join = [&](const std::string& foot) {
      std::string out;
      for (const std::string& p : parts) {
        if (!out.empty()) out += "\n\n";
        out += p;
      }
      if (!foot.empty()) {
        if (!out.empty()) out += "\n\n";
        out += foot;
      }
      if (!out.empty()) out += "\n";
      return out;
    };
    if (!footer) {
      std::string out = join("");
      tally->tokens = counter_.Count(out);
      return out;
    }
    tally->tokens = 0;
    std::string out = join(footer(*tally));
    for (int round = 0; round < 8; ++round) {
      const size_t n = counter_.Count(out);
      if (n == tally->tokens) break;
      tally->tokens = n;
      out = join(footer(*tally));
    }
    return out;
  }

  const DigestLayout& layout_;
  std::vector<size_t> display_;  // item indices by (order, priority)
  size_t budget_;
  const TokenCounter& counter_;
};

}  // namespace

BuiltDigest BuildDigest(const DigestLayout& layout, size_t budget, const TokenCounter& counter) {
  const Renderer r(layout, budget, counter);
  const size_t n = layout.items.size();
  BuiltDigest out;
  out.shown.assign(n, false);
  out.excerpt.assign(n, false);
  out.shown_text.assign(n, "");
  out.item_tokens.assign(n, 0);

  Selection sel;
  sel.shown.assign(n, false);
  sel.excerpt.assign(n, false);
  sel.text.assign(n, "");
  DigestTally tally;
  std::string text = r.Full(sel, &tally);
  if (!r.Fits(text)) {
    // Not even the frame fits: the footer alone, else nothing.
    text = r.FooterOnly(sel, &tally);
    if (r.Fits(text) && !text.empty()) {
      out.markdown = text;
      out.form = DigestForm::kFooterOnly;
    } else {
      out.form = DigestForm::kEmpty;
      tally = DigestTally{};
      tally.left_out = n;
      tally.budget = budget;
    }
    out.tokens = counter.Count(out.markdown);
    out.tally = tally;
    return out;
  }

  // In priority order: whole, else an excerpt, else stop.
  auto fits = [&]() {
    DigestTally t;
    return r.Fits(r.Full(sel, &t));
  };
  for (size_t i = 0; i < n; ++i) {
    const DigestItem& item = layout.items[i];
    sel.shown[i] = true;
    sel.text[i] = item.text;
    if (fits()) continue;
    // The excerpt: its passage whole, else as much of it as fits.
    const std::string& passage = item.excerpt.empty() ? item.text : item.excerpt;
    sel.excerpt[i] = true;
    if (!item.excerpt.empty()) {
      sel.text[i] = passage;
      if (fits()) continue;
    }
    const size_t total = Utf8Chars(passage);
    auto fits_with = [&](size_t k) {
      sel.text[i] = std::string(Utf8PrefixChars(passage, k)) + kEllipsis;
      return fits();
    };
    // The count grows with k (the estimate is monotone in appended text);
    // binary search for the largest k that fits, then confirm downwards.
    size_t lo = 0, hi = total > 0 ? total - 1 : 0;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo + 1) / 2;
      if (fits_with(mid)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    bool placed = false;
    for (size_t k = lo, tries = 0; k >= std::min<size_t>(kMinExcerptChars, total) && k >= 1 && tries < 64;
         --k, ++tries) {
      if (fits_with(k)) {
        placed = true;
        break;
      }
    }
    if (!placed) {
      sel.shown[i] = false;
      sel.excerpt[i] = false;
      sel.text[i].clear();
    }
    break;  // the budget is spent: every lower entry is left out
  }
  // The footer's numbers may have grown: drop from the bottom until the
  // final text fits (the shown entries stay a prefix).
  text = r.Full(sel, &tally);
  for (size_t i = n; i-- > 0 && !r.Fits(text);) {
    if (!sel.shown[i]) continue;
    sel.shown[i] = false;
    sel.excerpt[i] = false;
    sel.text[i].clear();
    text = r.Full(sel, &tally);
  }

  out.markdown = text;
  out.tokens = counter.Count(text);
  out.tally = tally;
  for (size_t i = 0; i < n; ++i) {
    out.shown[i] = sel.shown[i];
    out.excerpt[i] = sel.excerpt[i];
    out.shown_text[i] = sel.text[i];
    if (!sel.shown[i]) continue;
    out.item_tokens[i] = counter.Count(ItemLines(layout.items[i], sel.text[i], sel.excerpt[i]));
  }
  return out;
}

}  // namespace msp

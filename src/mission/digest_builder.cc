// Token-budgeted digest packing (see digest_builder.h).
#include "mission/digest_builder.h"

#include <algorithm>

namespace msp {
namespace {

constexpr const char* kEllipsis = "…";

// A candidate digest: which items are shown, and the cut text of a
// truncated one.
struct Selection {
  std::vector<bool> shown;
  int truncated_item = -1;
  std::string truncated_text;
};

std::string ItemLines(const DigestItem& item, const std::string& text) { return item.head + text + item.tail; }

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
        block += ItemLines(layout_.items[i], static_cast<int>(i) == sel.truncated_item ? sel.truncated_text
                                                                                    : layout_.items[i].text);
      }
      if (!block.empty()) parts.push_back(layout_.sections[s] + block);
    }
    return WithFooter(parts, layout_.footer, tally);
  }

  // The footer alone (no title, no sections, no entries).
  std::string FooterOnly(DigestTally* tally) const {
    Selection none;
    none.shown.assign(layout_.items.size(), false);
    *tally = TallyOf(none);
    return WithFooter({}, layout_.short_footer ? layout_.short_footer : layout_.footer, tally);
  }

  bool Fits(const std::string& text) const { return counter_.Count(text) <= budget_; }

 private:
  DigestTally TallyOf(const Selection& sel) const {
    DigestTally t;
    t.budget = budget_;
    for (bool b : sel.shown) (b ? t.shown : t.left_out) += 1;
    t.truncated = sel.truncated_item >= 0 ? 1 : 0;
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

size_t CountCodePoints(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string CutUtf8(const std::string& text, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) != 0x80) {
      if (chars == max_chars) return text.substr(0, i);
      ++chars;
    }
  }
  return text;
}

BuiltDigest BuildDigest(const DigestLayout& layout, size_t budget, const TokenCounter& counter) {
  const Renderer r(layout, budget, counter);
  const size_t n = layout.items.size();
  BuiltDigest out;
  out.shown.assign(n, false);
  out.item_tokens.assign(n, 0);

  Selection sel;
  sel.shown.assign(n, false);
  DigestTally tally;
  std::string text = r.Full(sel, &tally);
  if (!r.Fits(text)) {
    // Not even the frame fits: the footer alone, else nothing.
    text = r.FooterOnly(&tally);
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

  // Greedy in priority order: keep what fits with the whole digest.
  for (size_t i = 0; i < n; ++i) {
    sel.shown[i] = true;
    DigestTally t;
    if (!r.Fits(r.Full(sel, &t))) sel.shown[i] = false;
  }
  // Later skips may have grown the footer's numbers: drop from the bottom
  // until the final text fits.
  text = r.Full(sel, &tally);
  for (size_t i = n; i-- > 0 && !r.Fits(text);) {
    if (!sel.shown[i]) continue;
    sel.shown[i] = false;
    text = r.Full(sel, &tally);
  }

  // Nothing fits whole: as much of the first entry as fits.
  if (n > 0 && std::none_of(sel.shown.begin(), sel.shown.end(), [](bool b) { return b; })) {
    const size_t total = CountCodePoints(layout.items[0].text);
    Selection cut = sel;
    cut.shown[0] = true;
    cut.truncated_item = 0;
    auto fits_with = [&](size_t k, std::string* rendered, DigestTally* t) {
      cut.truncated_text = CutUtf8(layout.items[0].text, k) + kEllipsis;
      *rendered = r.Full(cut, t);
      return r.Fits(*rendered);
    };
    // The count grows with k (the estimate is monotone in appended text);
    // binary search, then confirm.
    size_t lo = 0, hi = total;  // invariant: fits(lo) or lo == 0
    std::string rendered;
    DigestTally t;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo + 1) / 2;
      if (fits_with(mid, &rendered, &t)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    for (size_t k = lo, tries = 0; k >= 1 && tries < 64; --k, ++tries) {
      if (fits_with(k, &rendered, &t)) {
        sel = cut;
        text = rendered;
        tally = t;
        break;
      }
    }
  }

  out.markdown = text;
  out.tokens = counter.Count(text);
  out.tally = tally;
  out.truncated_item = sel.truncated_item;
  out.truncated_text = sel.truncated_text;
  for (size_t i = 0; i < n; ++i) {
    out.shown[i] = sel.shown[i];
    if (!sel.shown[i]) continue;
    out.item_tokens[i] = counter.Count(
        ItemLines(layout.items[i], static_cast<int>(i) == sel.truncated_item ? sel.truncated_text : layout.items[i].text));
  }
  return out;
}

}  // namespace msp

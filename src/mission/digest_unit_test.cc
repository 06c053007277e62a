// Unit tests of the pure parts of mission retrieval: the budgeted digest
// builder (budget edges, Cyrillic, exact fits, a property over many random
// budgets), degraded-mode scoring, the event rate, causal order, the
// escalation rule and ISO weeks.
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>

#include "mission/degraded.h"
#include "mission/digest_builder.h"
#include "mission/render.h"
#include "mission/retrieval_log.h"
#include "mission/timeline.h"
#include "msp/digest.h"
#include "tests/support/test_util.h"
#include "util/time.h"
#include "util/utf8.h"
#include "working/tokens.h"

namespace msp {
namespace {

using testing::Contains;

DigestLayout SampleLayout(const std::vector<std::string>& texts) {
  DigestLayout layout;
  layout.title = "# Mission memory: test\nretrieval r1";
  layout.sections = {"## Domain", "## Workflow"};
  for (size_t i = 0; i < texts.size(); ++i) {
    DigestItem item;
    item.section = i % 2;
    item.head = "- [0." + std::to_string(90 - i) + "] fact: ";
    item.text = texts[i];
    item.tail = "\n  provenance: none recorded · id id-" + std::to_string(i);
    layout.items.push_back(item);
  }
  layout.footer = [](const DigestTally& t) {
    return "---\n" + std::to_string(t.shown) + " entries shown, " + std::to_string(t.left_out) + " left out · " +
           std::to_string(t.tokens) + "/" + std::to_string(t.budget) + " tokens";
  };
  layout.short_footer = [](const DigestTally& t) { return std::to_string(t.left_out) + " entries left out"; };
  return layout;
}

size_t ShownCount(const BuiltDigest& d) { return static_cast<size_t>(std::count(d.shown.begin(), d.shown.end(), true)); }

TEST(DigestBuilder, BudgetZeroIsEmpty) {
  const EstimateTokenCounter counter;
  const BuiltDigest d = BuildDigest(SampleLayout({"first entry text", "second entry text"}), 0, counter);
  EXPECT_EQ(d.markdown, "");
  EXPECT_EQ(d.tokens, 0u);
  EXPECT_EQ(d.form, DigestForm::kEmpty);
  EXPECT_EQ(ShownCount(d), 0u);
  EXPECT_EQ(d.tally.left_out, 2u);
}

TEST(DigestBuilder, LargeBudgetShowsEverythingInSections) {
  const EstimateTokenCounter counter;
  const BuiltDigest d = BuildDigest(SampleLayout({"alpha entry", "beta entry", "gamma entry"}), 10000, counter);
  EXPECT_EQ(ShownCount(d), 3u);
  EXPECT_EQ(d.form, DigestForm::kFull);
  EXPECT_EQ(d.tokens, counter.Count(d.markdown));
  // Sections in order; the domain section holds items 0 and 2 in priority order.
  const size_t domain = d.markdown.find("## Domain");
  const size_t workflow = d.markdown.find("## Workflow");
  ASSERT_NE(domain, std::string::npos);
  ASSERT_NE(workflow, std::string::npos);
  EXPECT_LT(domain, workflow);
  EXPECT_LT(d.markdown.find("alpha entry"), d.markdown.find("gamma entry"));
  EXPECT_LT(d.markdown.find("gamma entry"), workflow);
  EXPECT_GT(d.markdown.find("beta entry"), workflow);
  // The footer states the digest's own token count.
  EXPECT_TRUE(Contains(d.markdown, std::to_string(d.tokens) + "/10000 tokens")) << d.markdown;
  for (size_t i = 0; i < 3; ++i) EXPECT_GT(d.item_tokens[i], 0u);
}

TEST(DigestBuilder, EmptySectionIsNotShown) {
  const EstimateTokenCounter counter;
  DigestLayout layout = SampleLayout({"only domain entry"});
  const BuiltDigest d = BuildDigest(layout, 10000, counter);
  EXPECT_TRUE(Contains(d.markdown, "## Domain"));
  EXPECT_FALSE(Contains(d.markdown, "## Workflow"));
}

TEST(DigestBuilder, DisplayOrderWithinSectionFollowsOrderField) {
  const EstimateTokenCounter counter;
  DigestLayout layout = SampleLayout({"first by priority", "x", "second by priority"});
  layout.items[0].order = 5;  // shown after item 2
  layout.items[2].order = 1;
  const BuiltDigest d = BuildDigest(layout, 10000, counter);
  EXPECT_LT(d.markdown.find("second by priority"), d.markdown.find("first by priority"));
}

TEST(DigestBuilder, ExactFitBudget) {
  const EstimateTokenCounter counter;
  const DigestLayout layout = SampleLayout({"one entry about radar", "two entry about comms", "three about nav"});
  const BuiltDigest all = BuildDigest(layout, 100000, counter);
  ASSERT_EQ(ShownCount(all), 3u);
  // The footer states the budget, so the size depends a little on it: find
  // the budget the full digest fills exactly.
  size_t budget = all.tokens;
  BuiltDigest exact = BuildDigest(layout, budget, counter);
  for (int i = 0; i < 5 && exact.tokens != budget; ++i) {
    budget = exact.tokens;
    exact = BuildDigest(layout, budget, counter);
  }
  ASSERT_EQ(exact.tokens, budget);  // exactly full...
  EXPECT_EQ(ShownCount(exact), 3u);
  // ...and one token less cuts the last one (an excerpt) or drops it,
  // still within the budget.
  const BuiltDigest less = BuildDigest(layout, budget - 1, counter);
  EXPECT_TRUE(ShownCount(less) < 3u || less.excerpt[2]);
  EXPECT_TRUE(less.shown[0] && less.shown[1]);
  EXPECT_FALSE(less.excerpt[0] || less.excerpt[1]);
  EXPECT_LE(less.tokens, budget - 1);
  EXPECT_EQ(less.tokens, counter.Count(less.markdown));
}

TEST(DigestBuilder, BudgetSmallerThanOneEntryCutsTheFirstEntry) {
  const EstimateTokenCounter counter;
  std::string long_text;
  for (int i = 0; i < 200; ++i) long_text += "word" + std::to_string(i) + " ";
  const DigestLayout layout = SampleLayout({long_text, long_text});
  const BuiltDigest frame = BuildDigest(SampleLayout({}), 100000, counter);
  const size_t budget = frame.tokens + 60;  // the frame and part of one entry
  ASSERT_LT(budget, counter.Count(long_text));
  const BuiltDigest d = BuildDigest(layout, budget, counter);
  EXPECT_LE(d.tokens, budget);
  EXPECT_TRUE(d.excerpt[0]);
  EXPECT_TRUE(d.shown[0]);
  EXPECT_FALSE(d.shown[1]);
  EXPECT_EQ(d.tally.left_out, 1u);
  EXPECT_EQ(d.tally.truncated, 1u);
  EXPECT_TRUE(Contains(d.markdown, "word0 "));
  EXPECT_TRUE(Contains(d.markdown, "…"));
  EXPECT_TRUE(Contains(d.markdown, "1 left out")) << d.markdown;
  EXPECT_FALSE(Contains(d.markdown, "word199"));
}

// Issue 19: a budget too small for the top entry whole served a lower, smaller
// one instead. The top entry comes first, as an excerpt; nothing lower is
// shown in its place.
TEST(DigestBuilder, TopEntryFirstAsAnExcerptNeverALowerOneInstead) {
  const EstimateTokenCounter counter;
  std::string big;
  for (int i = 0; i < 300; ++i) big += "node-fetch backend plugin word" + std::to_string(i) + " ";
  const DigestLayout layout = SampleLayout({big, "a small low-ranked entry"});
  const BuiltDigest frame = BuildDigest(SampleLayout({}), 100000, counter);
  const BuiltDigest small = BuildDigest(SampleLayout({"a small low-ranked entry"}), 100000, counter);
  for (size_t budget = small.tokens; budget < small.tokens + 200; budget += 10) {
    const BuiltDigest d = BuildDigest(layout, budget, counter);
    EXPECT_LE(d.tokens, budget);
    EXPECT_FALSE(d.shown[1]) << "budget " << budget << ": a lower entry in place of the top one\n" << d.markdown;
    if (budget >= frame.tokens + 60) {
      EXPECT_TRUE(d.shown[0]) << budget;
      EXPECT_TRUE(d.excerpt[0]) << budget;
      EXPECT_TRUE(Contains(d.markdown, "node-fetch backend plugin word0")) << d.markdown;
    }
  }
}

// The excerpt shown is the item's passage with its own tail (where the full
// record is), and a whole entry after it still fits when there is room.
TEST(DigestBuilder, ExcerptPassageAndTail) {
  const EstimateTokenCounter counter;
  std::string big;
  for (int i = 0; i < 400; ++i) big += "filler" + std::to_string(i) + " ";
  DigestLayout layout = SampleLayout({big + "the matching passage " + big, "second entry"});
  layout.items[0].excerpt = "the matching passage";
  layout.items[0].excerpt_tail = "\n  excerpt; the full record: msp get id-0";
  const BuiltDigest frame = BuildDigest(SampleLayout({"second entry"}), 100000, counter);
  const BuiltDigest d = BuildDigest(layout, frame.tokens + 40, counter);
  ASSERT_TRUE(d.shown[0]);
  EXPECT_TRUE(d.excerpt[0]);
  EXPECT_EQ(d.shown_text[0], "the matching passage");
  EXPECT_TRUE(Contains(d.markdown, "the matching passage\n  excerpt; the full record: msp get id-0")) << d.markdown;
  EXPECT_FALSE(Contains(d.markdown, "provenance: none recorded · id id-0"));
  EXPECT_TRUE(d.shown[1]) << d.markdown;
  EXPECT_FALSE(d.excerpt[1]);
  EXPECT_EQ(d.tally.truncated, 1u);
}

TEST(DigestBuilder, FrameTooLargeFallsBackToFooterThenEmpty) {
  const EstimateTokenCounter counter;
  DigestLayout layout = SampleLayout({"some entry"});
  layout.title = std::string(400, 'x');  // a title costing ~80 tokens
  const size_t short_cost = counter.Count("1 entries left out\n");
  const BuiltDigest d = BuildDigest(layout, short_cost, counter);
  EXPECT_EQ(d.form, DigestForm::kFooterOnly);
  EXPECT_EQ(d.markdown, "1 entries left out\n");
  EXPECT_LE(d.tokens, short_cost);
  const BuiltDigest e = BuildDigest(layout, short_cost - 1, counter);
  EXPECT_EQ(e.form, DigestForm::kEmpty);
  EXPECT_EQ(e.markdown, "");
}

TEST(DigestBuilder, CyrillicEntriesAreCutAtCharacterBoundaries) {
  const EstimateTokenCounter counter;
  std::string text;
  for (int i = 0; i < 80; ++i) text += "Оператор змінив маршрут у секторі через загрозу. ";
  const DigestLayout layout = SampleLayout({text});
  const BuiltDigest frame = BuildDigest(SampleLayout({}), 100000, counter);
  for (size_t extra = 40; extra < 240; extra += 7) {
    const size_t budget = frame.tokens + extra;
    const BuiltDigest d = BuildDigest(layout, budget, counter);
    EXPECT_LE(d.tokens, budget);
    EXPECT_TRUE(IsValidUtf8(d.markdown)) << "budget " << budget;
    EXPECT_TRUE(Contains(d.markdown, "Оператор")) << "budget " << budget << "\n" << d.markdown;
  }
}

// Property: over many random layouts and budgets (fixed seed), the digest is
// never over budget, its reported count is its real count, and it is valid
// UTF-8. Run with the estimate and with msp's default counter.
void NeverOverBudget(const TokenCounter& counter) {
  std::mt19937 rng(20260105);
  const std::vector<std::string> words = {"radar", "сектор", "маршрут", "drone", "getUserName", "12345",
                                          "::",    "\n",     "загроза", "🙂",    "commit",      "x"};
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> texts(rng() % 8);
    for (std::string& t : texts) {
      const int n = static_cast<int>(rng() % 60);
      for (int k = 0; k < n; ++k) t += words[rng() % words.size()] + (rng() % 3 == 0 ? "" : " ");
    }
    const DigestLayout layout = SampleLayout(texts);
    const size_t budget = rng() % 400;
    const BuiltDigest d = BuildDigest(layout, budget, counter);
    ASSERT_LE(d.tokens, budget) << "round " << round << " counter " << counter.name();
    ASSERT_EQ(d.tokens, counter.Count(d.markdown));
    ASSERT_TRUE(IsValidUtf8(d.markdown));
    ASSERT_EQ(d.tally.shown + d.tally.left_out, texts.size());
    // What is shown is a prefix of the priority order.
    for (size_t i = 1; i < d.shown.size(); ++i) ASSERT_TRUE(d.shown[i - 1] || !d.shown[i]) << "round " << round;
  }
}

TEST(DigestBuilder, NeverOverBudgetEstimate) { NeverOverBudget(EstimateTokenCounter()); }

TEST(DigestBuilder, NeverOverBudgetDefaultCounter) { NeverOverBudget(*DefaultTokenCounter()); }

TEST(Render, OneLineText) {
  EXPECT_EQ(OneLineText("a\u2028b\u2029c\u200b", 100), "a b c");
  EXPECT_EQ(OneLineText("  a \n b\tc ", 100), "a b c");
  EXPECT_EQ(OneLineText("абвгд", 3), "аб…");
}

TEST(Degraded, CriticalityWeights) {
  EXPECT_DOUBLE_EQ(CriticalityWeight(Criticality::kLow), 0.25);
  EXPECT_DOUBLE_EQ(CriticalityWeight(Criticality::kNormal), 0.5);
  EXPECT_DOUBLE_EQ(CriticalityWeight(Criticality::kHigh), 0.75);
  EXPECT_DOUBLE_EQ(CriticalityWeight(Criticality::kCritical), 1.0);
}

TEST(Degraded, AlphaFunction) {
  EXPECT_DOUBLE_EQ(DegradedAlpha(0, 30), 0.0);
  EXPECT_DOUBLE_EQ(DegradedAlpha(30, 30), 0.0);
  EXPECT_DOUBLE_EQ(DegradedAlpha(45, 30), 0.5);
  EXPECT_DOUBLE_EQ(DegradedAlpha(60, 30), 1.0);
  EXPECT_DOUBLE_EQ(DegradedAlpha(600, 30), 1.0);
  EXPECT_DOUBLE_EQ(DegradedAlpha(100, 0), 0.0);  // capacity 0: off
  double last = 0.0;
  for (double rate = 0; rate <= 100; rate += 0.5) {  // monotone, within [0, 1]
    const double a = DegradedAlpha(rate, 30);
    EXPECT_GE(a, last);
    EXPECT_GE(a, 0.0);
    EXPECT_LE(a, 1.0);
    last = a;
  }
}

TEST(Degraded, ScoreMixesCriticalityAndSimilarity) {
  EXPECT_DOUBLE_EQ(DegradedScore(0.0, Criticality::kCritical, 0.3), 0.3);
  EXPECT_DOUBLE_EQ(DegradedScore(1.0, Criticality::kCritical, 0.3), 1.0);
  EXPECT_DOUBLE_EQ(DegradedScore(0.5, Criticality::kHigh, 0.25), 0.5);
  // Under full load a critical weak match beats a low strong one.
  EXPECT_GT(DegradedScore(1.0, Criticality::kCritical, 0.1), DegradedScore(1.0, Criticality::kLow, 0.9));
  EXPECT_LT(DegradedScore(0.0, Criticality::kCritical, 0.1), DegradedScore(0.0, Criticality::kLow, 0.9));
}

TEST(Degraded, EventRateCountsTheWindowOnly) {
  const TimeMs now = 10 * 60000;
  // (now - 2 min, now]: the event exactly 2 minutes ago is outside.
  const std::vector<TimeMs> times = {now - 120000, now - 119999, now - 60000, now, now + 1};
  EXPECT_DOUBLE_EQ(EventRatePerMin(times, now, 2), 1.5);
  EXPECT_DOUBLE_EQ(EventRatePerMin(times, now, 0), 0.0);
  MissionOptions o;
  o.rate_window_min = 2;
  o.capacity_events_per_min = 1.0;
  const LoadState s = LoadFrom(times, now, o);
  EXPECT_EQ(s.events_in_window, 3);
  EXPECT_DOUBLE_EQ(s.alpha, 0.5);
  EXPECT_TRUE(s.degraded);
}

TEST(Timeline, CausesComeBeforeEffectsEvenWhenStampedEarlier) {
  // c2 is stamped before its cause c1 (clock skew between processes).
  const std::vector<TimelineNode> nodes = {
      {"c1", 300, {}}, {"c2", 100, {"c1"}}, {"other", 200, {}}, {"c3", 50, {"c2"}}};
  const std::vector<size_t> order = CausalOrder(nodes);
  ASSERT_EQ(order.size(), 4u);
  auto pos = [&](size_t i) { return std::find(order.begin(), order.end(), i) - order.begin(); };
  EXPECT_LT(pos(0), pos(1));
  EXPECT_LT(pos(1), pos(3));
  EXPECT_EQ(order[0], 2u);  // "other" (200) is the earliest node free to go first
}

TEST(Timeline, TiesByTimeThenId) {
  const std::vector<TimelineNode> nodes = {{"b", 5, {}}, {"a", 5, {}}, {"c", 1, {}}, {"d", 9, {"missing"}}};
  EXPECT_EQ(CausalOrder(nodes), (std::vector<size_t>{2, 1, 0, 3}));
}

TEST(Timeline, CycleIsBrokenAndEveryNodeAppearsOnce) {
  const std::vector<TimelineNode> nodes = {{"a", 1, {"b"}}, {"b", 2, {"a"}}, {"c", 3, {"b"}}, {"a2", 0, {"a2"}}};
  const std::vector<size_t> order = CausalOrder(nodes);
  EXPECT_EQ(order, (std::vector<size_t>{3, 0, 1, 2}));
}

TEST(Timeline, EscalationRule) {
  MissionOptions o;
  o.escalation_window_min = 10;
  o.escalation_factor = 2.0;
  o.escalation_min_events = 3;
  const TimeMs now = 100 * 60000;
  const TimeMs m = 60000;
  std::vector<ComponentEvent> ev;
  // comms: 1 earlier, 4 recent -> escalating.
  ev.push_back({"comms", now - 15 * m});
  for (int i = 0; i < 4; ++i) ev.push_back({"comms", now - i * m});
  // nav: 3 earlier, 3 recent -> steady.
  for (int i = 0; i < 3; ++i) ev.push_back({"nav", now - 12 * m - i * m});
  for (int i = 0; i < 3; ++i) ev.push_back({"nav", now - i * m});
  // power: 2 recent, 0 earlier -> below the minimum.
  for (int i = 0; i < 2; ++i) ev.push_back({"power", now - i * m});
  // radar: 6 recent, 3 earlier (exactly factor 2) -> escalating; old ones ignored.
  for (int i = 0; i < 6; ++i) ev.push_back({"radar", now - i * m});
  for (int i = 0; i < 3; ++i) ev.push_back({"radar", now - 11 * m - i * m});
  for (int i = 0; i < 50; ++i) ev.push_back({"radar", now - 30 * m});
  const std::vector<Escalation> x = DetectEscalation(ev, now, o);
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0].component, "radar");
  EXPECT_EQ(x[0].recent, 6);
  EXPECT_EQ(x[0].earlier, 3);
  EXPECT_EQ(x[1].component, "comms");
  EXPECT_EQ(x[1].recent, 4);
  EXPECT_EQ(x[1].earlier, 1);
}

TEST(RetrievalLog, IsoWeeks) {
  EXPECT_EQ(IsoWeek(*ParseIso8601("2026-01-01T12:00:00Z")), "2026-W01");
  EXPECT_EQ(IsoWeek(*ParseIso8601("2027-01-01T00:00:00Z")), "2026-W53");
  EXPECT_EQ(IsoWeek(*ParseIso8601("2024-12-30T00:00:00Z")), "2025-W01");
  EXPECT_EQ(IsoWeek(*ParseIso8601("2026-01-05T00:00:00Z")), "2026-W02");
  EXPECT_EQ(IsoWeek(*ParseIso8601("2026-01-04T23:59:59Z")), "2026-W01");
}

TEST(Scope, Names) {
  for (QueryScope s : {QueryScope::kAll, QueryScope::kDomain, QueryScope::kWorkflow, QueryScope::kPractitioner}) {
    EXPECT_EQ(ParseQueryScope(QueryScopeName(s)), s);
  }
  EXPECT_FALSE(ParseQueryScope("everything").has_value());
  EXPECT_TRUE(IsEventType("threat"));
  EXPECT_FALSE(IsEventType("retrieval"));
}

}  // namespace
}  // namespace msp

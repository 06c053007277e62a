// The ADR parser on well-formed and odd files.
#include "mission/adr.h"

#include <gtest/gtest.h>

#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp {
namespace {

using testing::Contains;

bool AnyWarning(const ParsedAdr& a, const std::string& part) {
  for (const std::string& w : a.warnings) {
    if (Contains(w, part)) return true;
  }
  return false;
}

constexpr const char* kNygard = R"(# 1. Record architecture decisions

Date: 2016-02-12

## Status

Accepted

## Context

We need to record the architectural decisions made on this project.

## Decision

We will use Architecture Decision Records, as described by Michael Nygard.

## Consequences

See Michael Nygard's article, linked above.
)";

TEST(AdrParseTest, NygardFormat) {
  ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("0001-record-architecture-decisions.md", kNygard));
  EXPECT_EQ(a.number, 1);
  EXPECT_EQ(a.title, "Record architecture decisions");
  EXPECT_EQ(a.status, DecisionStatus::kAccepted);
  EXPECT_EQ(a.context, "We need to record the architectural decisions made on this project.");
  EXPECT_EQ(a.decision, "We will use Architecture Decision Records, as described by Michael Nygard.");
  EXPECT_EQ(a.consequences, "See Michael Nygard's article, linked above.");
  EXPECT_EQ(a.date, *ParseIso8601("2016-02-12"));
  EXPECT_TRUE(a.warnings.empty());
}

TEST(AdrParseTest, TitleForms) {
  struct Case {
    std::string heading, file;
    int number;
    std::string title;
  };
  for (const Case& c : std::vector<Case>{{"ADR-0005: Use Postgres", "x.md", 5, "Use Postgres"},
                                         {"ADR 12 - Split the API", "x.md", 12, "Split the API"},
                                         {"7) Cache tokens", "x.md", 7, "Cache tokens"},
                                         {"3D printing of parts", "0009-3d.md", 9, "3D printing of parts"},
                                         {"Use Kafka", "0004-kafka.md", 4, "Use Kafka"},
                                         {"Use Kafka", "kafka.md", 0, "Use Kafka"},
                                         {"2. Маршрутизація через північ", "x.md", 2, "Маршрутизація через північ"},
                                         {"8 \xE2\x80\x94 Em dash", "x.md", 8, "Em dash"}}) {
    const std::string text = "# " + c.heading + "\n## Status\nAccepted\n## Context\nc\n## Decision\nd\n";
    ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr(c.file, text));
    EXPECT_EQ(a.number, c.number) << c.heading;
    EXPECT_EQ(a.title, c.title) << c.heading;
  }
}

TEST(AdrParseTest, SupersedeLinks) {
  const std::string old_adr =
      "# 2. Use MySQL\n\n## Status\n\nSuperseded by [5. Use Postgres](0005-use-postgres.md)\n\n"
      "## Context\nc\n## Decision\nd\n## Consequences\nx\n";
  ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("0002-use-mysql.md", old_adr));
  EXPECT_EQ(a.status, DecisionStatus::kSuperseded);
  ASSERT_EQ(a.superseded_by.size(), 1u);
  EXPECT_EQ(a.superseded_by[0].file, "0005-use-postgres.md");

  const std::string new_adr =
      "# 5. Use Postgres\n\n## Status\n\nAccepted\n\nSupersedes [2. Use MySQL](./0002-use-mysql.md#top)\n\n"
      "Amended by [6. Tune](0006-tune.md)\n\n## Context\nc\n## Decision\nd\n## Consequences\nx\n";
  ASSERT_OK_AND_ASSIGN(ParsedAdr b, ParseAdr("0005-use-postgres.md", new_adr));
  EXPECT_EQ(b.status, DecisionStatus::kAccepted);
  ASSERT_EQ(b.supersedes.size(), 1u);
  EXPECT_EQ(b.supersedes[0].file, "0002-use-mysql.md");
  EXPECT_TRUE(AnyWarning(b, "Amended by"));

  ASSERT_OK_AND_ASSIGN(ParsedAdr c, ParseAdr("x.md", "# X\n## Status\n**Superseded** by ADR-0007\n"
                                                     "## Context\nc\n## Decision\nd\n"));
  EXPECT_EQ(c.status, DecisionStatus::kSuperseded);
  ASSERT_EQ(c.superseded_by.size(), 1u);
  EXPECT_EQ(c.superseded_by[0].number, 7);
  EXPECT_TRUE(c.superseded_by[0].file.empty());
}

TEST(AdrParseTest, ErrorsNameWhatIsMissing) {
  EXPECT_TRUE(Contains(ParseAdr("a.md", "## Status\nAccepted\n## Context\nc\n## Decision\nd\n").status().message(),
                       "no title"));
  EXPECT_TRUE(Contains(ParseAdr("a.md", "# T\n## Status\nAccepted\n## Decision\nd\n").status().message(),
                       "no Context section"));
  EXPECT_TRUE(Contains(ParseAdr("a.md", "# T\n## Status\nAccepted\n## Context\nc\n## Decision\n\n").status().message(),
                       "no Decision section"));
  const Status s = ParseAdr("a.md", "# T\n## Status\nMaybe later\n## Context\nc\n## Decision\nd\n").status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "unknown status 'Maybe later'"));
  EXPECT_TRUE(Contains(ParseAdr("a.md", "# T\n## Context\nbad \xFF\n").status().message(), "invalid UTF-8"));
}

TEST(AdrParseTest, ToleratedOddities) {
  // CRLF, a byte-order mark, no Status and no Consequences, an unknown
  // section, a heading inside a code block, lower-case section names.
  const std::string text =
      "\xEF\xBB\xBF# Odd one\r\n\r\n## context:\r\nSome context.\r\n\r\n```\r\n## Status\r\nnot a section\r\n```\r\n"
      "## Notes\r\nignored\r\n## DECISION\r\nDo it.\r\n";
  ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("odd.md", text));
  EXPECT_EQ(a.title, "Odd one");
  EXPECT_EQ(a.status, DecisionStatus::kProposed);
  EXPECT_TRUE(AnyWarning(a, "no status; imported as proposed"));
  EXPECT_TRUE(AnyWarning(a, "no Consequences section"));
  EXPECT_TRUE(AnyWarning(a, "section 'Notes' ignored"));
  EXPECT_TRUE(Contains(a.context, "## Status\nnot a section"));
  EXPECT_FALSE(Contains(a.context, "\r"));
  EXPECT_EQ(a.decision, "Do it.");
}

TEST(AdrParseTest, MadrFrontMatterAndOptions) {
  const std::string text = R"(---
status: accepted
date: 2024-05-06
deciders: Ann, Bob
---
# Use Xapian for lexical search

## Context and Problem Statement

SQLite FTS5 was slow.

## Considered Options

* **SQLite FTS5** too slow at scale
* Lucene: a JVM to run
* Tantivy - no C++ API
* Something without a reason

## Decision Outcome

Chosen option: Xapian.
)";
  ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("0010-xapian.md", text));
  EXPECT_EQ(a.number, 10);
  EXPECT_EQ(a.status, DecisionStatus::kAccepted);
  EXPECT_EQ(a.date, *ParseIso8601("2024-05-06"));
  EXPECT_EQ(a.deciders, "Ann, Bob");
  EXPECT_EQ(a.context, "SQLite FTS5 was slow.");
  EXPECT_EQ(a.decision, "Chosen option: Xapian.");
  ASSERT_EQ(a.alternatives.size(), 4u);
  EXPECT_EQ(a.alternatives[0], (Alternative{"SQLite FTS5", "too slow at scale"}));
  EXPECT_EQ(a.alternatives[1], (Alternative{"Lucene", "a JVM to run"}));
  EXPECT_EQ(a.alternatives[2], (Alternative{"Tantivy", "no C++ API"}));
  EXPECT_EQ(a.alternatives[3].option, "Something without a reason");
  EXPECT_TRUE(AnyWarning(a, "alternative 'Something without a reason' gives no reason"));
}

TEST(AdrParseTest, InlineStatusAndStatusWithDate) {
  ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("x.md", "# T\nStatus: Deprecated\n## Context\nc\n## Decision\nd\n"));
  EXPECT_EQ(a.status, DecisionStatus::kDeprecated);
  ASSERT_OK_AND_ASSIGN(ParsedAdr b,
                       ParseAdr("x.md", "# T\n## Status\nAccepted on 2021-07-08\n## Context\nc\n## Decision\nd\n"));
  EXPECT_EQ(b.status, DecisionStatus::kAccepted);
  EXPECT_EQ(b.date, *ParseIso8601("2021-07-08"));
}

}  // namespace
}  // namespace msp

// The ADR parser on well-formed and odd files.
#include "mission/adr.h"

#include <gtest/gtest.h>

#include "tests/support/test_util.h"
#include "mission/records.h"
#include "util/text.h"
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

TEST(AdrParseTest, OnlyUnreadableFilesAreErrors) {
  EXPECT_TRUE(Contains(ParseAdr("a.md", "# T\n## Context\nbad \xFF\n").status().message(), "invalid UTF-8"));
  EXPECT_TRUE(Contains(ParseAdr("a.md", "").status().message(), "no text to take a decision from"));
  EXPECT_TRUE(Contains(ParseAdr("a.md", "# Only a title\n").status().message(), "no text to take a decision from"));
  EXPECT_TRUE(Contains(ParseAdr("a.md", "---\ntitle: X\nstatus: accepted\n\n## Context\nc\n").status().message(),
                       "front matter opened by '---' on line 1 is never closed"));
}

TEST(AdrParseTest, MissingPartsAreFilledAndWarned) {
  // No title: named after the file.
  ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("0007-use-grpc-for-sync.md",
                                             "## Status\nAccepted\n## Context\nc\n## Decision\nd\n"));
  EXPECT_EQ(a.title, "Use grpc for sync");
  EXPECT_EQ(a.number, 7);
  EXPECT_TRUE(AnyWarning(a, "titled 'Use grpc for sync' after the file name"));
  // No Context: the text after the title.
  ASSERT_OK_AND_ASSIGN(ParsedAdr b, ParseAdr("b.md", "# T\n\nWe ship twice a day.\n\n## Decision\nd\n"));
  EXPECT_EQ(b.context, "We ship twice a day.");
  EXPECT_TRUE(AnyWarning(b, "no Context section; Context taken from the text after the title"));
  // Nothing to take a context from.
  ASSERT_OK_AND_ASSIGN(ParsedAdr c, ParseAdr("c.md", "# T\n## Decision\nd\n"));
  EXPECT_EQ(c.context, "(no context given in the ADR)");
  // No Decision: the first other section.
  ASSERT_OK_AND_ASSIGN(ParsedAdr d, ParseAdr("d.md", "# T\n## Background\nWhy.\n## Format\nYAML files.\n"));
  EXPECT_EQ(d.context, "Why.");
  EXPECT_EQ(d.decision, "YAML files.");
  EXPECT_TRUE(AnyWarning(d, "Decision taken from section 'Format'"));
  // Links are not a context; "On hold" is a status.
  ASSERT_OK_AND_ASSIGN(ParsedAdr f, ParseAdr("f.md", "# T\n\n- Status: on hold\n\n## Decision\nd\n\n## Links\n\n"
                                                     "- <https://example.com/x>\n"));
  EXPECT_EQ(f.context, "(no context given in the ADR)");
  EXPECT_EQ(f.status, DecisionStatus::kProposed);
  EXPECT_FALSE(AnyWarning(f, "unknown status"));
  // An unknown status word is a warning, not an error.
  ASSERT_OK_AND_ASSIGN(ParsedAdr e, ParseAdr("e.md", "# T\n## Status\nMaybe later\n## Context\nc\n## Decision\nd\n"));
  EXPECT_EQ(e.status, DecisionStatus::kProposed);
  EXPECT_TRUE(AnyWarning(e, "unknown status 'Maybe later'"));
}

TEST(AdrParseTest, LongSectionsAreSplitNotLost) {
  std::string context;
  while (context.size() < kMaxContextBytes + 5000) context += "A paragraph about the context of it all.\n\n";
  ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("a.md", "# T\n## Context\n" + context + "## Decision\nd\n"));
  EXPECT_LE(a.context.size(), kMaxContextBytes);
  ASSERT_FALSE(a.sections.empty());
  EXPECT_EQ(a.sections.back().heading, "Context (continued)");
  // Every byte of the context is in one of the two parts: the head, then
  // the rest (only the blank line between them is dropped).
  const std::string orig(TrimAsciiSpace(context));
  const std::string head = a.context.substr(0, a.context.size() - std::string("\n\xE2\x80\xA6").size());
  const std::string& rest = a.sections.back().text;
  EXPECT_EQ(orig.rfind(head, 0), 0u);
  EXPECT_TRUE(orig.ends_with(rest));
  EXPECT_GE(head.size() + rest.size() + 2, orig.size());
  EXPECT_TRUE(AnyWarning(a, "the rest is kept as 'Context (continued)'"));
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
  ASSERT_EQ(a.sections.size(), 1u);
  EXPECT_EQ(a.sections[0], (DecisionSection{"Notes", "ignored"}));
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

// ---- the formats in the wild (fixtures written for these tests, each in the
// shape its tool or template produces)

TEST(AdrParseTest, DocusaurusFrontMatterTitleAndSupersededAdmonition) {
  const std::string text = R"(---
id: adrs-adr013
title: 'ADR013: Proper use of HTTP fetching libraries'
# prettier-ignore
description: Architecture Decision Record (ADR) for the proper use of HTTP clients.
---

:::note Superseded

This ADR has been superseded by [ADR014](./adr014-use-fetch.md) and no longer applies.

:::

## Context

Several HTTP packages are in use.

## Decision

Backend packages use `node-fetch`.

## Consequences

Lint rules follow.
)";
  ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("adr013-use-node-fetch.md", text));
  EXPECT_EQ(a.title, "Proper use of HTTP fetching libraries");
  EXPECT_EQ(a.number, 13);
  EXPECT_EQ(a.id, "adrs-adr013");
  EXPECT_EQ(a.status, DecisionStatus::kSuperseded);
  ASSERT_EQ(a.superseded_by.size(), 1u);
  EXPECT_EQ(a.superseded_by[0].file, "adr014-use-fetch.md");
  EXPECT_EQ(a.superseded_by[0].number, 14);
  EXPECT_EQ(a.context, "Several HTTP packages are in use.");
  EXPECT_EQ(a.decision, "Backend packages use `node-fetch`.");
  EXPECT_FALSE(AnyWarning(a, "no title"));
  // The admonition is kept (the text before the first section).
  ASSERT_FALSE(a.sections.empty());
  EXPECT_TRUE(Contains(a.sections[0].text, "no longer applies"));
}

TEST(AdrParseTest, Madr3FrontMatterListsAndKeptSections) {
  const std::string text = R"(---
status: "accepted"
date: 2023-11-02
decision-makers:
  - Ann Lee
  - Bob Stone
consulted: Carol
---

# Use Kafka for the event bus

## Context and Problem Statement

Services poll each other.

## Decision Drivers

* Throughput above 50k events/s
* Replay of a day of events

## Considered Options

* Kafka
* RabbitMQ

## Decision Outcome

Chosen option: "Kafka", because only it replays a day of events.

### Consequences

* Good, because consumers can replay.
* Bad, because we run ZooKeeper.

## Pros and Cons of the Options

### RabbitMQ

* Bad, because replay needs a plugin.
)";
  ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("0004-use-kafka.md", text));
  EXPECT_EQ(a.title, "Use Kafka for the event bus");
  EXPECT_EQ(a.number, 4);
  EXPECT_EQ(a.status, DecisionStatus::kAccepted);
  EXPECT_EQ(a.date, *ParseIso8601("2023-11-02"));
  EXPECT_EQ(a.deciders, "Ann Lee, Bob Stone");
  EXPECT_EQ(a.context, "Services poll each other.");
  EXPECT_TRUE(Contains(a.decision, "Chosen option: \"Kafka\""));
  EXPECT_TRUE(Contains(a.consequences, "we run ZooKeeper"));
  std::map<std::string, std::string> kept;
  for (const DecisionSection& s : a.sections) kept[s.heading] = s.text;
  EXPECT_TRUE(Contains(kept["Decision Drivers"], "Replay of a day of events"));
  EXPECT_TRUE(Contains(kept["Pros and Cons of the Options"], "### RabbitMQ"));
  EXPECT_TRUE(Contains(kept["Pros and Cons of the Options"], "replay needs a plugin"));
}

TEST(AdrParseTest, Log4brainsListMetadataAndLinksSection) {
  const std::string old_adr = R"(# Use the ADR number as its unique ID

- Status: superseded by [20201016-use-the-adr-slug-as-its-unique-id](20201016-use-the-adr-slug-as-its-unique-id.md)
- Date: 2020-09-26
- Deciders: Tom, Ana

## Context and Problem Statement

ADRs need an identifier.

## Decision Outcome

The number.
)";
  ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("20200926-use-the-adr-number-as-its-unique-id.md", old_adr));
  EXPECT_EQ(a.status, DecisionStatus::kSuperseded);
  EXPECT_EQ(a.number, 0);  // the file name's leading number is a date
  EXPECT_EQ(a.date, *ParseIso8601("2020-09-26"));
  EXPECT_EQ(a.deciders, "Tom, Ana");
  ASSERT_EQ(a.superseded_by.size(), 1u);
  EXPECT_EQ(a.superseded_by[0].file, "20201016-use-the-adr-slug-as-its-unique-id.md");

  const std::string new_adr = R"(# Use the ADR slug as its unique ID

- Status: accepted

## Context and Problem Statement

Numbers collide across branches.

## Decision Outcome

The slug.

## Links

- Supersedes [20200926-use-the-adr-number-as-its-unique-id](20200926-use-the-adr-number-as-its-unique-id.md)
)";
  ASSERT_OK_AND_ASSIGN(ParsedAdr b, ParseAdr("20201016-use-the-adr-slug-as-its-unique-id.md", new_adr));
  EXPECT_EQ(b.status, DecisionStatus::kAccepted);
  EXPECT_EQ(b.date, *ParseIso8601("2020-10-16"));  // from the file name
  ASSERT_EQ(b.supersedes.size(), 1u);
  EXPECT_EQ(b.supersedes[0].file, "20200926-use-the-adr-number-as-its-unique-id.md");
}

TEST(AdrParseTest, FrontMatterSupersedeKeys) {
  ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("0002-x.md", "---\nstatus: superseded\nsuperseded-by: 0007-y.md\n"
                                                          "---\n# X\n## Context\nc\n## Decision\nd\n"));
  EXPECT_EQ(a.status, DecisionStatus::kSuperseded);
  ASSERT_EQ(a.superseded_by.size(), 1u);
  EXPECT_EQ(a.superseded_by[0].file, "0007-y.md");
  ASSERT_OK_AND_ASSIGN(ParsedAdr b, ParseAdr("0007-y.md", "---\nsupersedes: [ADR-0002, 3]\nstatus: Accepted\n"
                                                          "---\n# Y\n## Context\nc\n## Decision\nd\n"));
  ASSERT_EQ(b.supersedes.size(), 2u);
  EXPECT_EQ(b.supersedes[0].number, 2);
  EXPECT_EQ(b.supersedes[1].number, 3);
  ASSERT_OK_AND_ASSIGN(ParsedAdr c, ParseAdr("0003-z.md", "---\nsupersededBy:\n  - ./0007-y.md\n---\n"
                                                          "# Z\n## Context\nc\n## Decision\nd\n"));
  EXPECT_EQ(c.status, DecisionStatus::kSuperseded);
  ASSERT_EQ(c.superseded_by.size(), 1u);
  EXPECT_EQ(c.superseded_by[0].file, "0007-y.md");
}

TEST(AdrParseTest, StatusTagsInTitles) {
  struct Case {
    std::string heading;
    DecisionStatus status;
    std::string title;
    int number;
  };
  for (const Case& c : std::vector<Case>{
           {"[superseded] Use MySQL", DecisionStatus::kSuperseded, "Use MySQL", 0},
           {"5. Use MySQL [Superseded]", DecisionStatus::kSuperseded, "Use MySQL", 5},
           {"[DEPRECATED] 6. Use Grunt", DecisionStatus::kDeprecated, "Use Grunt", 6},
           {"Superseded: Use MySQL", DecisionStatus::kSuperseded, "Use MySQL", 0},
           {"ADR-0008: Use Redis (rejected)", DecisionStatus::kRejected, "Use Redis", 8},
           {"Use [Accepted](x.md) words", DecisionStatus::kProposed, "Use [Accepted](x.md) words", 0},
       }) {
    ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("x.md", "# " + c.heading + "\n## Context\nc\n## Decision\nd\n"));
    EXPECT_EQ(a.status, c.status) << c.heading;
    EXPECT_EQ(a.title, c.title) << c.heading;
    EXPECT_EQ(a.number, c.number) << c.heading;
  }
  // "[superseded by ADR-12]" names the successor.
  ASSERT_OK_AND_ASSIGN(ParsedAdr b, ParseAdr("x.md", "# Use X [superseded by ADR-12]\n## Context\nc\n## Decision\nd\n"));
  ASSERT_EQ(b.superseded_by.size(), 1u);
  EXPECT_EQ(b.superseded_by[0].number, 12);
}

TEST(AdrParseTest, SupersedeSentencesInProse) {
  // A sentence that starts a line counts, in any section.
  ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("0003-a.md", "# A\n## Status\nAccepted\n## Context\n"
                                                          "This decision has been superseded by "
                                                          "[ADR 9](0009-b.md).\n\nMore.\n## Decision\nd\n"));
  EXPECT_EQ(a.status, DecisionStatus::kSuperseded);
  ASSERT_EQ(a.superseded_by.size(), 1u);
  EXPECT_EQ(a.superseded_by[0].file, "0009-b.md");
  // A mention in the middle of a sentence does not.
  ASSERT_OK_AND_ASSIGN(ParsedAdr b, ParseAdr("b.md", "# B\n## Status\nAccepted\n## Context\nThe cache may one day "
                                                     "be superseded by a CDN.\n## Decision\nd\n"));
  EXPECT_EQ(b.status, DecisionStatus::kAccepted);
  EXPECT_TRUE(b.superseded_by.empty());
  // One that names no ADR is a warning.
  ASSERT_OK_AND_ASSIGN(ParsedAdr c, ParseAdr("c.md", "# C\n## Status\nSuperseded by the new design\n"
                                                     "## Context\nc\n## Decision\nd\n"));
  EXPECT_EQ(c.status, DecisionStatus::kSuperseded);
  EXPECT_TRUE(c.superseded_by.empty());
  EXPECT_TRUE(AnyWarning(c, "looks like a supersede but names no ADR"));
  // Misspelt, struck out, "replaced by" in a status.
  ASSERT_OK_AND_ASSIGN(ParsedAdr d, ParseAdr("d.md", "# D\n## Status\n~~Accepted~~ Superceded by "
                                                     "[4](0004-x.md)\n## Context\nc\n## Decision\nd\n"));
  EXPECT_EQ(d.status, DecisionStatus::kSuperseded);
  ASSERT_EQ(d.superseded_by.size(), 1u);
  ASSERT_OK_AND_ASSIGN(ParsedAdr e, ParseAdr("e.md", "# E\nStatus: Replaced by ADR-0011\n## Context\nc\n"
                                                     "## Decision\nd\n"));
  EXPECT_EQ(e.status, DecisionStatus::kSuperseded);
  ASSERT_EQ(e.superseded_by.size(), 1u);
  EXPECT_EQ(e.superseded_by[0].number, 11);
}

TEST(AdrParseTest, TableMetadataSetextTitleAndDates) {
  // A table before the first section (Backstage) and a setext title.
  ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("adr002-format.md",
                                             "ADR002: Default File Format\n===========================\n\n"
                                             "| Created    | Status |\n| ---------- | ------ |\n"
                                             "| 2020-05-17 | Open   |\n\n## Background\n\nWhy.\n\n## Format\n\n"
                                             "YAML.\n\n## Envelope\n\nFields.\n"));
  EXPECT_EQ(a.title, "Default File Format");
  EXPECT_EQ(a.number, 2);
  EXPECT_EQ(a.status, DecisionStatus::kProposed);  // "Open"
  EXPECT_FALSE(AnyWarning(a, "unknown status"));
  EXPECT_EQ(a.date, *ParseIso8601("2020-05-17"));
  EXPECT_EQ(a.decision, "YAML.");
  ASSERT_EQ(a.sections.size(), 1u);
  EXPECT_EQ(a.sections[0].heading, "Envelope");
  // Other date forms.
  for (const auto& [line, date] : std::vector<std::pair<std::string, std::string>>{
           {"Date: May 17, 2020", "2020-05-17"},
           {"Date: 17 May 2020", "2020-05-17"},
           {"Date: 2020/05/17", "2020-05-17"},
           {"* Date: 2021-03-04T10:00:00Z", "2021-03-04"}}) {
    ASSERT_OK_AND_ASSIGN(ParsedAdr b, ParseAdr("x.md", "# X\n" + line + "\n## Context\nc\n## Decision\nd\n"));
    EXPECT_EQ(b.date, *ParseIso8601(date)) << line;
  }
  ASSERT_OK_AND_ASSIGN(ParsedAdr c, ParseAdr("x.md", "---\ndate: \"2019-01-02\"\n---\n# X\n## Context\nc\n"
                                                     "## Decision\nd\n"));
  EXPECT_EQ(c.date, *ParseIso8601("2019-01-02"));
}

TEST(AdrParseTest, StatusForms) {
  struct Case {
    std::string text;
    DecisionStatus status;
  };
  for (const Case& c : std::vector<Case>{
           {"## Status: Accepted\n", DecisionStatus::kAccepted},
           {"## Status\n\n\xE2\x9C\x85 Accepted\n", DecisionStatus::kAccepted},
           {"## Status\n\nProposed 2020-01-02\n\nAccepted 2020-02-03\n", DecisionStatus::kAccepted},
           {"## Status\n\nAccepted\n\nThe team agreed on this in the March review; it may be revisited.\n",
            DecisionStatus::kAccepted},
           {"## Status\n\nIn progress\n", DecisionStatus::kProposed},
           {"## Status\n\nWithdrawn\n", DecisionStatus::kRejected},
       }) {
    ASSERT_OK_AND_ASSIGN(ParsedAdr a, ParseAdr("x.md", "# X\n" + c.text + "## Context\nc\n## Decision\nd\n"));
    EXPECT_EQ(a.status, c.status) << c.text;
    EXPECT_FALSE(AnyWarning(a, "unknown status")) << c.text;
  }
  ASSERT_OK_AND_ASSIGN(ParsedAdr v, ParseAdr("x.md", "# X\n## Context\nc\n## Decision: UEI is required\n\nAlways.\n"));
  EXPECT_EQ(v.decision, "UEI is required\n\nAlways.");
  ASSERT_OK_AND_ASSIGN(ParsedAdr b, ParseAdr("x.md", "# [ADR-0042] Use X\n\n## Deciders\n\n- Ann\n- Bob\n\n"
                                                     "## Context\nc\n## Decision\nd\n"));
  EXPECT_EQ(b.number, 42);
  EXPECT_EQ(b.title, "Use X");
  EXPECT_EQ(b.deciders, "Ann, Bob");
}

TEST(AdrParseTest, FileNameNumbers) {
  EXPECT_EQ(AdrNumberOfFileName("0005-x.md"), 5);
  EXPECT_EQ(AdrNumberOfFileName("adr013-use-fetch.md"), 13);
  EXPECT_EQ(AdrNumberOfFileName("ADR-0013_x.md"), 13);
  EXPECT_EQ(AdrNumberOfFileName("20200926-x.md"), 0);
  EXPECT_EQ(AdrNumberOfFileName("2020-05-17-x.md"), 0);
  EXPECT_EQ(AdrNumberOfFileName("use-x.md"), 0);
}

}  // namespace
}  // namespace msp

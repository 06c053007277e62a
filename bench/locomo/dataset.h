// LoCoMo (Maharana et al., 2024) as the retrieval evaluation sees it: the
// conversations of locomo10.json with their sessions, turns and questions,
// and the evidence ids of each question normalised against the turns that
// exist. See bench/README.md, "LoCoMo evaluation".
#ifndef MSP_BENCH_LOCOMO_DATASET_H_
#define MSP_BENCH_LOCOMO_DATASET_H_

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "msp/status.h"
#include "msp/types.h"

namespace msp::locomo {

// How a turn is written as one document (the same text for every system):
//   kSpeaker: "Caroline: Hey Mel! ... [image: a photo of a dog]"
//   kPlain:   "Hey Mel! ... [image: a photo of a dog]"
//   kDated:   "[1:56 pm on 8 May, 2023] Caroline: Hey Mel! ... [image: ...]"
// The " [image: caption]" suffix is present only when the turn carries a
// blip_caption and captions are on.
enum class TurnFormat { kSpeaker, kPlain, kDated };
std::string_view TurnFormatName(TurnFormat f);
// Accepts exactly "speaker", "plain", "dated".
Result<TurnFormat> ParseTurnFormat(std::string_view name);

// The categories of the dataset's own evaluation code.
inline constexpr int kCategories = 5;
// "multi-hop", "temporal", "open-domain", "single-hop", "adversarial";
// REQUIRES: 1 <= category <= kCategories.
std::string_view CategoryName(int category);

struct Turn {
  std::string dia_id;   // canonical "D<session>:<turn>"
  std::string speaker;
  std::string raw_text;
  std::string caption;  // blip_caption, empty when the turn has no image
  int session = 0;      // the N of session_N
  int index = 0;        // 1-based position in its session
  std::string text;     // the document: raw_text written in a TurnFormat
};

struct Session {
  int number = 0;            // the N of session_N
  std::string date;          // session_N_date_time as written
  TimeMs timestamp = 0;      // the date parsed (UTC)
  std::vector<size_t> turns; // indexes into Conversation::turns, in order
};

struct Question {
  std::string question;
  int category = 0;                    // 1..kCategories
  std::vector<std::string> evidence;   // normalised, existing, distinct; never empty
};

struct Conversation {
  std::string sample_id;
  std::vector<Session> sessions;  // the session_N keys that hold turns, by N
  std::vector<Turn> turns;        // every turn, session by session
  std::unordered_map<std::string, size_t> turn_by_id;  // dia_id -> index in turns
  std::vector<Question> questions;  // only those with evidence left after normalising
};

// What evidence normalisation did, over the conversations loaded.
struct EvidenceReport {
  int questions = 0;              // every question in the file
  int without_evidence = 0;       // no evidence list, or an empty one: skipped
  int all_evidence_dropped = 0;   // nothing resolved after normalising: skipped
  int evidence_strings = 0;
  int strings_normalised = 0;     // strings that were not one canonical id
  int ids_dropped = 0;            // pieces that do not parse or name no turn
  std::vector<std::string> changes;  // "conv-43: 'D:11:26' -> D11:26", one per change
};

struct Dataset {
  std::vector<Conversation> conversations;
  EvidenceReport evidence;
};

// $MSP_LOCOMO, else <source dir>/../shared/bench-data/locomo10.json.
std::string DefaultDataPath();

// "1:56 pm on 8 May, 2023" -> ms since the epoch, UTC. InvalidArgument for
// anything else, naming the input.
Result<TimeMs> ParseSessionDate(std::string_view date);

// Splits a raw evidence string on ';', ',' and whitespace and writes each
// piece canonically: a stray colon after the D goes ("D:11:26" -> "D11:26"),
// leading zeros go ("D30:05" -> "D30:5"). A piece that is not
// D[:]<digits>:<digits> comes back unchanged (it will not resolve).
std::vector<std::string> SplitEvidence(std::string_view raw);

// The document for a turn in `format`.
std::string FormatTurn(const Turn& turn, const std::string& session_date, TurnFormat format,
                       bool with_caption);

// Loads locomo10.json: the first `limit` conversations (0: all).
Result<Dataset> LoadDataset(const std::string& path, TurnFormat format, bool with_caption,
                            int limit);

// The long-record variant: every run of `n` consecutive turns of a session
// becomes one turn (a passage) whose text is theirs joined by newlines, whose
// dia_id is its first turn's and whose index is its place in the session
// (1-based). Evidence ids are mapped to their passage (each passage once).
// REQUIRES: n >= 1 (1: unchanged).
void JoinTurns(Dataset* data, int n);

// "D12:3" -> "D12"; the session part of a dia_id.
std::string_view SessionOf(std::string_view dia_id);

}  // namespace msp::locomo

#endif  // MSP_BENCH_LOCOMO_DATASET_H_

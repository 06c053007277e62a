// The operation table: every operation declared in src/api (operation.h),
// in the order the reference page lists them. Faces and tests walk it.
#ifndef MSP_API_OPERATIONS_H_
#define MSP_API_OPERATIONS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/operation.h"

namespace msp::api {

// Every operation. Built once; thread-safe.
const std::vector<const Operation*>& Operations();

// The operation named `name` ("search"), declaring only that one when the
// table has not been built (what one command-line verb needs); by its CLI
// verb ("query") or its MCP tool ("memory_search"), which builds the table.
// nullptr when there is none. Thread-safe.
const Operation* FindOperation(std::string_view name);
const Operation* FindByCliVerb(std::string_view verb);
const Operation* FindByMcpTool(std::string_view tool);

// `message` (an error of Operation::Call) as the command line says it: each
// field named by its flag ("field 'top_k' must be..." -> "--top-k must
// be...", "'namespace.mission'" -> "--mission").
std::string CliMessage(const OperationInfo& info, std::string message);

// `message` as REST says it for a route without a body (GET, DELETE), whose
// fields are query parameters: "field 'filters.kinds'" -> "parameter
// 'kinds'". A POST or PUT route's message is the operation's own.
std::string RestMessage(const OperationInfo& info, std::string message);

// The declarations (search.cc, workflow_query.cc, write.cc, record.cc,
// list.cc, episode.cc, tasks.cc, stats.cc, audit.cc, decisions.cc).
std::unique_ptr<Operation> SearchOperation();
std::unique_ptr<Operation> WorkflowQueryOperation();
std::unique_ptr<Operation> WriteOperation();
std::unique_ptr<Operation> GetOperation();      // record.cc
std::unique_ptr<Operation> HistoryOperation();  // record.cc
std::unique_ptr<Operation> DeleteOperation();   // record.cc
std::unique_ptr<Operation> ListOperation();     // list.cc
std::unique_ptr<Operation> EpisodeAddOperation();   // episode.cc
std::unique_ptr<Operation> SessionStepsOperation();  // episode.cc
std::unique_ptr<Operation> SessionEndOperation();    // episode.cc
std::unique_ptr<Operation> StatsOperation();         // stats.cc
std::unique_ptr<Operation> AuditOperation();         // audit.cc
std::unique_ptr<Operation> TaskAddOperation();      // tasks.cc
std::unique_ptr<Operation> TaskListOperation();     // tasks.cc
std::unique_ptr<Operation> TaskShowOperation();     // tasks.cc
std::unique_ptr<Operation> TaskCommentOperation();  // tasks.cc
std::unique_ptr<Operation> TaskStatusOperation();   // tasks.cc
std::unique_ptr<Operation> DecisionRecordOperation();     // decisions.cc
std::unique_ptr<Operation> DecisionListOperation();       // decisions.cc
std::unique_ptr<Operation> DecisionShowOperation();       // decisions.cc
std::unique_ptr<Operation> DecisionStatusOperation();     // decisions.cc
std::unique_ptr<Operation> DecisionSupersedeOperation();  // decisions.cc
std::unique_ptr<Operation> CorrectionRecordOperation();   // corrections.cc
std::unique_ptr<Operation> CorrectionListOperation();     // corrections.cc
std::unique_ptr<Operation> CorrectionShowOperation();     // corrections.cc
std::unique_ptr<Operation> FactAddOperation();            // facts.cc
std::unique_ptr<Operation> FactSupersedeOperation();      // facts.cc
std::unique_ptr<Operation> ConsolidateOperation();        // facts.cc
std::unique_ptr<Operation> HandoffOperation();            // handoff.cc
std::unique_ptr<Operation> MarkUsedOperation();           // mark_used.cc
std::unique_ptr<Operation> AdrImportOperation();          // adr_import.cc
std::unique_ptr<Operation> PrincipleListOperation();      // principles.cc
std::unique_ptr<Operation> PrincipleShowOperation();      // principles.cc
std::unique_ptr<Operation> PrinciplePutOperation();       // principles.cc
std::unique_ptr<Operation> OperatorSetOperation();        // operators.cc
std::unique_ptr<Operation> OperatorListOperation();       // operators.cc
std::unique_ptr<Operation> OperatorShowOperation();       // operators.cc
std::unique_ptr<Operation> EventAddOperation();           // events.cc
std::unique_ptr<Operation> EventListOperation();          // events.cc
std::unique_ptr<Operation> ReportLoadOperation();         // reports.cc
std::unique_ptr<Operation> ReportCorrectionsOperation();  // reports.cc
std::unique_ptr<Operation> ReportCorrectionPairsOperation();  // reports.cc
std::unique_ptr<Operation> ReportRedundancyOperation();   // reports.cc

// memory_write's decoding of one record, its errors naming the field under
// `prefix` ("memories[3]."): REST's batch (POST /v1/memories with
// {"memories": [...]}) writes each record as memory_write reads it.
Result<WriteRequest> DecodeWrite(const CallContext& context, const nlohmann::json& record,
                                 const std::string& prefix);

// The answer of session_end and consolidate (a ConsolidationReport), as JSON
// Schema (episode.cc).
nlohmann::json ConsolidationReportSchema();

}  // namespace msp::api

#endif  // MSP_API_OPERATIONS_H_

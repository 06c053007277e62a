// The entry point of libmsp_ingest_formats.so (see formats.h).
#include "ingest/formats.h"

extern "C" __attribute__((visibility("default"))) const msp::IngestFormatsV1* msp_ingest_formats_v1() {
  static const msp::IngestFormatsV1 table{1, &msp::ReadPdf, &msp::ReadDocx, &msp::ReadMarkdown, &msp::ReadHtml};
  return &table;
}

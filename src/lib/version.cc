// The version libmsp reports at run time (msp/version.h).
#include "msp/version.h"

namespace msp {

const char* LibraryVersion() { return MSP_VERSION_STRING; }

}  // namespace msp

#pragma once
// What a failure's detail says about the provider itself, so that every
// report of a failed exchange (the conformance runner's, the adpp client
// commands') tells the same story: a provider that died is always named with
// its exit status or signal ("closed stdout" alone never says why), and its
// last stderr line is quoted.

#include <chrono>
#include <string>

#include "dot/adpp/client.h"

namespace dot::adpp {

// " (provider: exit 1)" or " (provider: killed by signal 11 (Segmentation
// fault))" once the provider has exited, waiting up to `grace` for that (its
// pipes close a moment before its exit can be reaped); nothing while it runs
// or when `exit_stated` (the detail already names the status). Then
// " (stderr: LAST LINE)" when it wrote to stderr (160 bytes at most, raw:
// the printer escapes it).
std::string provider_postscript(ProviderProcess& p, std::chrono::milliseconds grace, bool exit_stated = false);

}  // namespace dot::adpp

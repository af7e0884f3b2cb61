// A streamed output file (a CSV written during the run): its failure record
// and the close that renames NAME.partial to NAME.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace rocesim::sim {

// An output that could not be written: its path and why.
struct OutputFailure {
  std::string file, error;
};

// Closes a streamed file and renames PATH.partial to PATH; on any write error
// (a full disk is seen here at the latest) removes the .partial instead and
// lists PATH in failed. first_err: the errno of the first failed write (0 if
// none was seen). f is null afterwards; a null f is left alone.
void close_stream(std::FILE*& f, const std::string& path, int first_err, std::vector<OutputFailure>& failed);

// Opens PATH.partial for writing; false with "cannot write PATH: reason" in why.
bool open_stream(std::FILE*& f, const std::string& path, std::string& why);

}  // namespace rocesim::sim

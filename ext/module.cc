// The table dtrcheck-ext.so exports (ext/ext_api.h). Built with hidden
// visibility: the functions it points to are the module's own copies.
#include <memory>

#include "checker/persist/file_digest.h"
#include "ext/ext_api.h"
#include "ext/ext_build_id.h"

namespace {

std::unique_ptr<dtr::MpiSession> g_session;

void MpiStart(int* argc, char*** argv) {
  g_session = std::make_unique<dtr::MpiSession>(argc, argv);
}
void MpiStop() { g_session.reset(); }
int MpiFinish(int status, const std::string& error) { return g_session->Finish(status, error); }

}  // namespace

extern "C" __attribute__((visibility("default"))) const dtr::ExtApi* dtrcheck_ext_api() {
  static const dtr::ExtApi api{
      .abi = dtr::kExtAbi,
      .size = sizeof(dtr::ExtApi),
      .build_id = dtr::kExtBuildId,
      .query_window = &dtr::QueryWindow,
      .bound_window = &dtr::BoundWindow,
      .plan_window = &dtr::PlanWindow,
      .file_digest = &dtr::FileDigest,
      .mpi_start = &MpiStart,
      .mpi_stop = &MpiStop,
      .mpi_finish = &MpiFinish,
      .mpi_library_version = &dtr::MpiLibraryVersion,
      .farm_ranks = &dtr::FarmRanks,
      .farm_rank = &dtr::FarmRank,
      .farm_collects_here = &dtr::FarmCollectsHere,
      .farm_is_distributed = &dtr::FarmIsDistributed,
      .run_distributed_farm = &dtr::RunDistributedFarm,
      .share_from_collector = &dtr::ShareFromCollector,
  };
  return &api;
}

#include "diagnose/certificate.h"

namespace dtr {

std::string_view CertificateKindName(CertificateKind k) {
  switch (k) {
    case CertificateKind::kScript:
      return "script";
    case CertificateKind::kStaticBound:
      return "static-bound";
    case CertificateKind::kUnsatWindow:
      return "unsat-window";
    case CertificateKind::kCut:
      return "cut";
  }
  return "?";
}

std::string_view CheckedByName(CheckedBy c) {
  switch (c) {
    case CheckedBy::kScheduleChecker:
      return "schedule-checker";
    case CheckedBy::kMemoryBound:
      return "memory-bound";
    case CheckedBy::kZ3:
      return "z3";
    case CheckedBy::kCutArgument:
      return "cut-argument";
  }
  return "?";
}

bool Certificate::Holds() const {
  switch (kind) {
    case CertificateKind::kScript:
      return script && script->check.passed() && script->check.budget == budget;
    case CertificateKind::kStaticBound:
      return bound > budget && need.total() == bound;
    case CertificateKind::kUnsatWindow:
      return window && window->answer == SolverAnswer::kUnsat && window->budget == budget;
    case CertificateKind::kCut:
      if (!cut || cut->budget != budget) return false;
      switch (cut->kind) {
        case CutArgument::Kind::kCut:
          return cut->need + cut->carried + cut->cut > budget;
        case CutArgument::Kind::kKeep:
          return cut->need + cut->carried > budget;
        case CutArgument::Kind::kEvicted:
          return !cut->kept.empty();
        case CutArgument::Kind::kCheckpoints:
          return cut->need + cut->cut > budget && cut->spans.size() == cut->cut_storages.size();
      }
      return false;
  }
  return false;
}

Certificate ScriptCertificate(int64_t budget, const Witness& witness) {
  Certificate c;
  c.kind = CertificateKind::kScript;
  c.budget = budget;
  c.checked_by = CheckedBy::kScheduleChecker;
  c.script = witness;
  return c;
}

Certificate StaticBoundCertificate(int64_t budget, const MemoryBound& bound) {
  Certificate c;
  c.kind = CertificateKind::kStaticBound;
  c.budget = budget;
  c.checked_by = CheckedBy::kMemoryBound;
  c.bound = bound.bytes;
  c.need = bound.attained_by;
  return c;
}

Certificate UnsatWindowCertificate(int64_t budget, const WindowQuery& query) {
  Certificate c;
  c.kind = CertificateKind::kUnsatWindow;
  c.budget = budget;
  c.checked_by = CheckedBy::kZ3;
  c.window = query;
  return c;
}

Certificate CutCertificate(int64_t budget, const CutArgument& argument) {
  Certificate c;
  c.kind = CertificateKind::kCut;
  c.budget = budget;
  c.checked_by = CheckedBy::kCutArgument;
  c.cut = argument;
  return c;
}

}  // namespace dtr

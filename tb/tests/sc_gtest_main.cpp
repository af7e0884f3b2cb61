// GoogleTest entry for tests that elaborate SystemC: libsystemc provides main()
// and calls sc_main(). SystemC errors and warnings become test failures
// (the VCML convention), so a model that reports a problem cannot pass.
#include <gtest/gtest.h>

#include <cstdlib>

#include <systemc>

namespace {
void report_to_gtest(const sc_core::sc_report& r, const sc_core::sc_actions& actions) {
  if (r.get_severity() >= sc_core::SC_WARNING && r.get_severity() != sc_core::SC_FATAL) {
    ADD_FAILURE() << "SystemC " << (r.get_severity() == sc_core::SC_WARNING ? "warning" : "error") << " ["
                  << r.get_msg_type() << "]: " << r.get_msg();
  }
  sc_core::sc_report_handler::default_handler(r, actions & ~sc_core::SC_DISPLAY);
}
}  // namespace

int sc_main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  ::testing::InitGoogleTest(&argc, argv);
  sc_core::sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", sc_core::SC_DO_NOTHING);
  sc_core::sc_report_handler::set_handler(report_to_gtest);
  return RUN_ALL_TESTS();
}

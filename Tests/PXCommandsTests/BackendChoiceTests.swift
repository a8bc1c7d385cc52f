import PX
import PXCommandLine
import PXCore
import PXTestSupport
import Testing

/// `--backend auto`: DCMTK when the operation's tool is on PATH, except C-GET (getscu), which stays native so
/// that a compressed study arrives as stored (getscu 3.6.7 proposes only uncompressed syntaxes): a rule on
/// ``BackendOperation``, not on a tool name.
@Suite struct BackendChoiceTests {
    @Test func autoRetrievesWithCGETNatively() throws {
        #expect(try PX.backend(.auto, for: .get).name == "native")
        // Even with getscu named explicitly (pypx's --executable), auto keeps C-GET native; --backend dcmtk runs it.
        #expect(try PX.backend(.auto, executables: ["getscu": "/usr/bin/getscu"], for: .get).name == "native")
        #expect(try PX.backend(.dcmtk, executables: ["getscu": "/usr/bin/getscu"], for: .get).name == "dcmtk")
    }

    @Test func everyOperationNamesItsTool() {
        #expect(
            BackendOperation.allCases.map(\.dcmtkTool) == [
                "echoscu", "findscu", "findscu", "movescu", "getscu", "storescu", "storescp",
            ])
        #expect(BackendOperation.allCases.filter { !$0.autoPrefersDCMTK } == [.findCohort, .get])
    }

    @Test(.tags(.integration), .integrationTier) func autoUsesDCMTKForTheOtherToolsWhenInstalled() throws {
        // CI installs DCMTK (scripts/setup-test-env.sh), so findscu and movescu are on PATH.
        #expect(try PX.backend(.auto, for: .find).name == "dcmtk")
        #expect(try PX.backend(.auto, for: .move).name == "dcmtk")
        // A cohort's rows share one native association; findscu would be a process and an association per row.
        #expect(try PX.backend(.auto, for: .findCohort).name == "native")
    }

    /// pypx's `--executable` naming a path that is not there (issue 36): `auto` leaves it out and runs the
    /// operation with the tool on PATH or natively; `dcmtk` fails with toolMissing naming the path.
    @Test func aMissingExecutablePathFallsBackUnderAuto() throws {
        let missing = ["echoscu": "/nonexistent/bin/echoscu"]
        let expected = TestSupport.locate("echoscu") != nil ? "dcmtk" : "native"
        #expect(try PX.backend(.auto, executables: missing, for: .echo).name == expected)
        #expect(throws: PXError.self) { try PX.backend(.dcmtk, executables: missing, for: .echo) }
        do {
            _ = try PX.backend(.dcmtk, executables: missing, for: .echo)
        } catch {
            #expect(error.code == .toolMissing)
            #expect(error.message.contains("/nonexistent/bin/echoscu"))
        }
    }
}

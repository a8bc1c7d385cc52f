import PX
import PXCommandLine
import PXCore
import Testing

/// `--backend auto`: DCMTK when its tool is on PATH, except C-GET (getscu), which stays native so that a
/// compressed study arrives as stored (getscu 3.6.7 proposes only uncompressed syntaxes).
@Suite struct BackendChoiceTests {
    @Test func autoRetrievesWithCGETNatively() throws {
        #expect(try PX.backend(.auto, tool: "getscu").name == "native")
        // Even with getscu named explicitly (pypx's --executable), auto keeps C-GET native; --backend dcmtk runs it.
        #expect(try PX.backend(.auto, executables: ["getscu": "/usr/bin/getscu"], tool: "getscu").name == "native")
        #expect(try PX.backend(.dcmtk, executables: ["getscu": "/usr/bin/getscu"], tool: "getscu").name == "dcmtk")
    }

    @Test(.tags(.integration), .integrationTier) func autoUsesDCMTKForTheOtherToolsWhenInstalled() throws {
        // CI installs DCMTK (scripts/setup-test-env.sh), so findscu and movescu are on PATH.
        #expect(try PX.backend(.auto, tool: "findscu").name == "dcmtk")
        #expect(try PX.backend(.auto, tool: "movescu").name == "dcmtk")
    }
}

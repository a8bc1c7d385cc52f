import DICOMData
import Foundation
import PXTestSupport
import Testing

/// px-find over QIDO-RS and over C-FIND (both backends) against the same Orthanc give the same JSON, byte for
/// byte once sorted by UID (issue 23): px asks QIDO-RS for exactly the keys it asks C-FIND, and keeps only the
/// keys it asked from either answer (Orthanc adds RetrieveAETitle to C-FIND answers, its DICOMweb plugin
/// NumberOf* and other attributes to QIDO-RS answers).
@Suite(
    "px-find: QIDO-RS and C-FIND give the same JSON", .tags(.integration), .integrationTier, .serialized,
    OrthancCommandPeer(dicomWeb: true), .timeLimit(.minutes(3)))
struct QIDOParityTests {
    /// Queries at patient (Patient Root), study, series and image level, with the default keys and with a few
    /// asked for. The patient-level ones failed before over QIDO-RS (a usage error: QIDO-RS searches no patients).
    static func queries(_ context: OrthancCommandPeer.Context) -> [(arguments: [String], uidTag: String)] {
        [
            (["--level", "study"], "0020000D"),
            (["--level", "study", "--PatientName", "Doe*", "--StudyDate", "19000101-29991231"], "0020000D"),
            (["--level", "study", "-k", "AccessionNumber", "-k", "ReferringPhysicianName"], "0020000D"),
            (["--level", "study", "--QueryReturnTags", "StudyInstanceUID,PatientID,ModalitiesInStudy"], "0020000D"),
            (["--level", "series", "-k", "Modality"], "0020000E"),
            (["--level", "series", "--StudyInstanceUID", context.largestStudy], "0020000E"),
            (["--level", "image", "-k", "InstanceNumber", "-k", "SOPClassUID"], "00080018"),
            (["--level", "patient", "--model", "patient"], "00100020"),
            (
                [
                    "--level", "patient", "--model", "patient", "--PatientName", "Doe*", "-k", "PatientBirthDate", "-k",
                    "NumberOfPatientRelatedSeries", "-k", "NumberOfPatientRelatedInstances",
                ], "00100020"
            ),
        ]
    }

    @Test func queriesGiveTheSameJSON() async throws {
        let context = try DICOMWebCommandTests.context()
        let dimsePeer = "\(OrthancCommandPeer.orthancAETitle)@127.0.0.1:\(context.dicomPort)"
        for query in Self.queries(context) {
            let web = try await DICOMWebCommandTests.findData(
                DICOMWebCommandTests.url(context), query.arguments, uidTag: query.uidTag)
            #expect(!web.isEmpty, "\(query.arguments)")
            for backend in ["native", "dcmtk"] {
                let dimse = try await DICOMWebCommandTests.findData(
                    dimsePeer, query.arguments + ["--backend", backend], uidTag: query.uidTag)
                #expect(
                    JSONValue.array(dimse).serialized() == JSONValue.array(web).serialized(),
                    "\(backend) \(query.arguments): C-FIND \(JSONValue.array(dimse).serialized()) vs QIDO-RS \(JSONValue.array(web).serialized())"
                )
            }
        }
    }

    /// The keys of each study and series of px-find's default answer (pypx's two-phase query, pypx JSON), by UID.
    static func pypxKeys(_ peer: String, _ arguments: [String]) async throws -> [String: [String]] {
        let run = try await PeerHarness.runAsync("px-find", [peer] + arguments)
        #expect(run.exitCode == 0, "px-find \(peer) \(arguments): \(run.stdout) \(run.stderr)")
        let data = try #require(run.json?["data"]?.arrayValue, "px-find \(peer) printed no data: \(run.stdout)")
        var out: [String: [String]] = [:]
        for study in data {
            let uid = study["StudyInstanceUID"]?["value"]?.stringValue ?? "?"
            out["study " + uid] = (study.objectValue ?? []).map(\.key).sorted()
            for series in study["series"]?.arrayValue ?? [] {
                let seriesUID = series["SeriesInstanceUID"]?["value"]?.stringValue ?? "?"
                out["series " + seriesUID] = (series.objectValue ?? []).map(\.key).sorted()
            }
        }
        return out
    }

    /// px-find's defaults as a pypx user runs them (no --level: studies, then their series, in pypx JSON): the
    /// same keys for every study and series over QIDO-RS and C-FIND. Before, C-FIND's matches had RetrieveAETitle
    /// (Orthanc returns it, pypx prints it) and QIDO-RS's did not.
    @Test(arguments: [[String](), ["--PatientID", "PAT001"], ["--Modality", "CT"], ["--format", "pypx-clean"]])
    func twoPhaseDefaultsGiveTheSameKeys(arguments: [String]) async throws {
        let context = try DICOMWebCommandTests.context()
        let dimsePeer = "\(OrthancCommandPeer.orthancAETitle)@127.0.0.1:\(context.dicomPort)"
        let web = try await Self.pypxKeys(DICOMWebCommandTests.url(context), arguments)
        #expect(!web.isEmpty, "\(arguments)")
        for backend in ["native", "dcmtk"] {
            let dimse = try await Self.pypxKeys(dimsePeer, arguments + ["--backend", backend])
            #expect(dimse == web, "\(backend) \(arguments): C-FIND \(dimse) vs QIDO-RS \(web)")
        }
    }
}

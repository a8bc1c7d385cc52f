import DICOMData
import DICOMWeb
import Foundation
import PXCore
import PXTestSupport
import Testing

/// ``DICOMWebInventory`` (QIDO-RS) against the suite's Orthanc, compared with the same Orthanc's C-FIND
/// answers (px-find, native backend) and with the loaded corpus.
extension DICOMWebCommandTests {
    /// px-find's pypx entries by the value of `uidKeyword`.
    static func cFind(_ context: OrthancCommandPeer.Context, _ arguments: [String], by uidKeyword: String)
        async throws -> [String: JSONValue]
    {
        let run = try await PeerHarness.runAsync(
            "px-find", [context.peer, "--backend", "native"] + arguments)
        #expect(run.exitCode == 0, "px-find \(arguments): \(run.stdout) \(run.stderr)")
        var out: [String: JSONValue] = [:]
        for entry in run.json?["data"]?.arrayValue ?? [] {
            if let uid = OrthancCommandTests.value(entry, uidKeyword) { out[uid] = entry }
        }
        return out
    }

    @Test(
        "DICOMweb inventory: studies, series and instances by QIDO-RS equal Orthanc's C-FIND answers, in pages of 1 and of 500"
    )
    func inventoryEqualsCFind() async throws {
        let context = try Self.context()
        let place = try DICOMWebPlace(url: Self.url(context))
        let studyKeys = [
            "-k", "NumberOfStudyRelatedSeries", "-k", "NumberOfStudyRelatedInstances", "-k", "AccessionNumber",
        ]
        let dimseStudies = try await Self.cFind(context, ["--level", "study"] + studyKeys, by: "StudyInstanceUID")
        // Other tests of the suite may have stored more studies (STOW-RS): the loaded corpus is a part.
        #expect(Set(context.corpus.studies.keys).isSubset(of: Set(dimseStudies.keys)))
        /// A value as the inventory gives it: `nil` for none or empty; a PN without its empty trailing
        /// component groups (C-FIND and QIDO-RS of Orthanc spell `A=B=` and `A=B`).
        func normalised(_ value: String?, personName: Bool = false) -> String? {
            guard var value, !value.isEmpty else { return nil }
            while personName && value.hasSuffix("=") { value.removeLast() }
            return value
        }
        // A page of one match: every answer needs the offset paging (a single request would give one match).
        for pageSize in [1, 500] {
            let inventory = DICOMWebInventory(place: place, pageSize: pageSize)
            let studies = try await inventory.studies(matching: DataSet())
            #expect(studies.count == dimseStudies.count, "page size \(pageSize): \(studies.map(\.studyInstanceUID))")
            #expect(Set(studies.map(\.studyInstanceUID)) == Set(dimseStudies.keys), "page size \(pageSize)")
            for study in studies {
                let uid = study.studyInstanceUID
                let dimse = dimseStudies[uid]
                func dimseValue(_ keyword: String) -> String? {
                    normalised(OrthancCommandTests.value(dimse, keyword), personName: keyword == "PatientName")
                }
                #expect(study.seriesCount.map(String.init) == dimseValue("NumberOfStudyRelatedSeries"), "\(uid)")
                #expect(study.instanceCount.map(String.init) == dimseValue("NumberOfStudyRelatedInstances"), "\(uid)")
                #expect(study.patientID == dimseValue("PatientID"), "\(uid)")
                #expect(study.studyDate == dimseValue("StudyDate"), "\(uid)")
                #expect(study.accessionNumber == dimseValue("AccessionNumber"), "\(uid)")
                if let loaded = context.corpus.studies[uid] {
                    // The corpus' names and descriptions (Latin-1, UTF-8, Japanese) come back the same
                    // both ways (other stored studies have characters Orthanc's two answers spell apart).
                    #expect(normalised(study.patientName, personName: true) == dimseValue("PatientName"), "\(uid)")
                    #expect(study.studyDescription == dimseValue("StudyDescription"), "\(uid)")
                    #expect(study.instanceCount == loaded.count, "\(uid)")
                }

                let dimseSeries = try await Self.cFind(
                    context,
                    [
                        "--level", "series", "--StudyInstanceUID", uid, "-k", "Modality", "-k", "SeriesNumber", "-k",
                        "SeriesDescription", "-k", "NumberOfSeriesRelatedInstances",
                    ], by: "SeriesInstanceUID")
                let series = try await inventory.series(ofStudy: uid)
                #expect(series.count == study.seriesCount, "\(uid)")
                #expect(Set(series.map(\.seriesInstanceUID)) == Set(dimseSeries.keys), "\(uid)")
                for one in series {
                    let entry = dimseSeries[one.seriesInstanceUID]
                    func dimseValue(_ keyword: String) -> String? {
                        normalised(OrthancCommandTests.value(entry, keyword))
                    }
                    #expect(one.studyInstanceUID == uid)
                    #expect(one.modality == dimseValue("Modality"))
                    #expect(one.seriesNumber == dimseValue("SeriesNumber"))
                    #expect(one.instanceCount.map(String.init) == dimseValue("NumberOfSeriesRelatedInstances"))
                    if context.corpus.studies[uid] != nil {
                        #expect(one.seriesDescription == dimseValue("SeriesDescription"))
                    }
                    let instances = try await inventory.instances(ofStudy: uid, series: one.seriesInstanceUID)
                    #expect(instances.count == one.instanceCount, "\(one.seriesInstanceUID)")
                    if let members = context.corpus.series[one.seriesInstanceUID] {
                        #expect(instances == Set(members.compactMap { $0.string(.sopInstanceUID) }))
                    }
                }
            }
        }
    }

    @Test("DICOMweb inventory: matching keys select studies as C-FIND's do (wildcard name, date range, patient)")
    func inventoryMatching() async throws {
        let context = try Self.context()
        let inventory = DICOMWebInventory(place: try DICOMWebPlace(url: Self.url(context)), pageSize: 2)
        for arguments in [
            ["--PatientName", "Doe*"], ["--StudyDate", "19000101-29991231"], ["--PatientID", "PAT002"],
        ] {
            var keys = DataSet()
            let keyword = String(arguments[0].dropFirst(2))
            let tag = try #require(DataDictionary.tag(forKeyword: keyword))
            keys.set(tag, vr: DataDictionary.entry(for: tag)?.vr ?? .LO, string: arguments[1])
            let dimse = try await Self.cFind(context, ["--level", "study"] + arguments, by: "StudyInstanceUID")
            #expect(!dimse.isEmpty, "\(arguments)")
            let studies = try await inventory.studies(matching: keys)
            #expect(Set(studies.map(\.studyInstanceUID)) == Set(dimse.keys), "\(arguments)")
        }
        // An unknown study has no series; a place that is not there is an error with a code.
        #expect(try await inventory.series(ofStudy: "1.2.3.999").isEmpty)
        let closed = try TestSupport.freePort()
        let absent = DICOMWebInventory(place: try DICOMWebPlace(url: "http://127.0.0.1:\(closed)/dicom-web"))
        await #expect(throws: PXError.self) { try await absent.studies(matching: DataSet()) }
    }
}

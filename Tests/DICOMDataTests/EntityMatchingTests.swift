import DICOMData
import Testing

/// ``EntityMatching``: entities matched through their instances, the computed counts of PS3.4 §C.6.1.1, and
/// the response identifiers of §C.4.1.1.3.2.
@Suite("Entity matching and computed counts (PS3.4 §C.6.1.1)", .timeLimit(.minutes(1)))
struct EntityMatchingTests {
    static func record(patient: String, study: String, series: String, instance: String, modality: String) -> DataSet {
        var ds = DataSet()
        ds.set(.patientID, vr: .LO, string: patient)
        ds.set(.studyInstanceUID, vr: .UI, string: study)
        ds.set(.seriesInstanceUID, vr: .UI, string: series)
        ds.set(.sopInstanceUID, vr: .UI, string: instance)
        ds.set(.modality, vr: .CS, string: modality)
        return ds
    }

    /// P1: study 1.1 (series 1.1.1 CT x3, series 1.1.2 MR x2), study 1.2 (series 1.2.1 CT x1); P2: study 2.1
    /// (series 2.1.1 US x1).
    static let records: [DataSet] = {
        var records: [DataSet] = []
        for n in 1...3 {
            records.append(
                Self.record(patient: "P1", study: "1.1", series: "1.1.1", instance: "1.1.1.\(n)", modality: "CT"))
        }
        for n in 1...2 {
            records.append(
                Self.record(patient: "P1", study: "1.1", series: "1.1.2", instance: "1.1.2.\(n)", modality: "MR"))
        }
        records.append(Self.record(patient: "P1", study: "1.2", series: "1.2.1", instance: "1.2.1.1", modality: "CT"))
        records.append(Self.record(patient: "P2", study: "2.1", series: "2.1.1", instance: "2.1.1.1", modality: "US"))
        return records
    }()

    static func keys(_ build: (inout DataSet) -> Void) -> DataSet {
        var ds = DataSet()
        build(&ds)
        return ds
    }

    @Test func countsPerPatientStudyAndSeries() throws {
        let completed = EntityMatching.addingComputedAttributes(Self.records)
        #expect(completed.count == Self.records.count)
        let first = completed[0]
        #expect(first.string(EntityMatching.numberOfPatientRelatedStudies) == "2")
        #expect(first.string(EntityMatching.numberOfPatientRelatedSeries) == "3")
        #expect(first.string(EntityMatching.numberOfPatientRelatedInstances) == "6")
        #expect(first.string(EntityMatching.numberOfStudyRelatedSeries) == "2")
        #expect(first.string(EntityMatching.numberOfStudyRelatedInstances) == "5")
        #expect(first.string(EntityMatching.numberOfSeriesRelatedInstances) == "3")
        // Modalities in Study: each once, in the order first seen.
        #expect(first.strings(EntityMatching.modalitiesInStudy) == ["CT", "MR"])
        let last = try #require(completed.last)
        #expect(last.string(EntityMatching.numberOfPatientRelatedInstances) == "1")
        #expect(last.strings(EntityMatching.modalitiesInStudy) == ["US"])
    }

    /// Records taken one at a time answer as the list does; told the UIDs are distinct, only records without
    /// one are still told apart (one entity), and counts told so count as the counts that remember the UIDs.
    @Test func oneRecordAtATimeAndDistinctKeys() {
        var withoutUID = Self.records[0]
        withoutUID.remove(.sopInstanceUID)
        let records = Self.records + [withoutUID, withoutUID]
        let listed = EntityMatching.firstOfEachEntity(matching: DataSet(), in: records, uniqueKey: .sopInstanceUID)
        #expect(listed.count == Self.records.count + 1)
        var distinct = EntityMatching.FirstOfEachEntity(
            matching: DataSet(), uniqueKey: .sopInstanceUID, distinctKeys: true)
        #expect(records.filter { distinct.accepts($0) }.count == Self.records.count + 1)
        var studies = EntityMatching.FirstOfEachEntity(matching: DataSet(), uniqueKey: .studyInstanceUID)
        #expect(
            records.filter { studies.accepts($0) }.compactMap { $0.string(.studyInstanceUID) } == ["1.1", "1.2", "2.1"])

        let remembering = EntityMatching.Counts(Self.records)
        var told = EntityMatching.Counts(distinctInstances: true)
        for record in Self.records { told.add(record) }
        #expect(
            Self.records.map(told.attributes(of:)).map { $0.map(\.bytes) }
                == Self.records.map(remembering.attributes(of:)).map { $0.map(\.bytes) })
        // Without being told, an instance held twice counts once.
        #expect(EntityMatching.Counts(Self.records + [Self.records[0]]) == remembering)
    }

    @Test func aValueTheRecordHoldsIsKept() {
        var record = Self.records[0]
        record.set(EntityMatching.numberOfStudyRelatedInstances, vr: .IS, string: "99")
        let completed = EntityMatching.addingComputedAttributes([record] + Self.records.dropFirst())
        #expect(completed[0].string(EntityMatching.numberOfStudyRelatedInstances) == "99")
        #expect(completed[0].string(EntityMatching.numberOfStudyRelatedSeries) == "2")
    }

    @Test func entitiesMatchThroughAnyOfTheirInstances() {
        let completed = EntityMatching.addingComputedAttributes(Self.records)
        // Studies with an MR instance: only 1.1, answered once (its first matching instance).
        let mr = EntityMatching.firstOfEachEntity(
            matching: Self.keys { $0.set(.modality, vr: .CS, string: "MR") }, in: completed,
            uniqueKey: .studyInstanceUID)
        #expect(mr.map { $0.string(.sopInstanceUID) } == ["1.1.2.1"])
        // A computed attribute is a key too: studies of one series.
        let single = EntityMatching.firstOfEachEntity(
            matching: Self.keys { $0.set(EntityMatching.numberOfStudyRelatedSeries, vr: .IS, string: "1") },
            in: completed, uniqueKey: .studyInstanceUID)
        #expect(single.map { $0.string(.studyInstanceUID) } == ["1.2", "2.1"])
        // Every series of patient P1, in record order.
        let series = EntityMatching.firstOfEachEntity(
            matching: Self.keys { $0.set(.patientID, vr: .LO, string: "P1") }, in: completed,
            uniqueKey: .seriesInstanceUID)
        #expect(series.map { $0.string(.seriesInstanceUID) } == ["1.1.1", "1.1.2", "1.2.1"])
        // Patients with a wildcard key.
        let patients = EntityMatching.firstOfEachEntity(
            matching: Self.keys { $0.set(.patientID, vr: .LO, string: "P*") }, in: completed, uniqueKey: .patientID)
        #expect(patients.map { $0.string(.patientID) } == ["P1", "P2"])
    }

    @Test func responseHoldsTheKeysAskedForAndTheUniqueKey() throws {
        let record = EntityMatching.addingComputedAttributes(Self.records)[0]
        let identifier = Self.keys {
            $0.set(.queryRetrieveLevel, vr: .CS, string: "STUDY")
            $0.set(.patientID, vr: .LO, string: "")
            $0.set(.patientName, vr: .PN, string: "")
            $0.set(EntityMatching.numberOfStudyRelatedInstances, vr: .IS, string: "")
            $0.set(EntityMatching.retrieveAETitle, vr: .AE, string: "")
        }
        let response = EntityMatching.response(
            to: identifier, level: "STUDY", uniqueKey: .studyInstanceUID, from: record, retrieveAETitle: "PXSERVE")
        #expect(response.string(.queryRetrieveLevel) == "STUDY")
        #expect(response.string(.patientID) == "P1")
        #expect(response[.patientName] != nil && response[.patientName]?.isEmpty == true)
        #expect(response.string(EntityMatching.numberOfStudyRelatedInstances) == "5")
        #expect(response.string(EntityMatching.retrieveAETitle) == "PXSERVE")
        #expect(response.string(.studyInstanceUID) == "1.1")
        // Nothing else of the record.
        #expect(response[.modality] == nil && response[.sopInstanceUID] == nil)
    }

    @Test func levelsAndMisplacedKeys() {
        #expect(EntityMatching.uniqueKey(level: "PATIENT") == .patientID)
        #expect(EntityMatching.uniqueKey(level: "IMAGE") == .sopInstanceUID)
        #expect(EntityMatching.uniqueKey(level: "WORKLIST") == nil)
        #expect(EntityMatching.misplacedKey(in: Self.records[0]) == nil)
        var bad = Self.records[0]
        bad.set(.transferSyntaxUID, vr: .UI, string: "1.2.840.10008.1.2.1")
        #expect(EntityMatching.misplacedKey(in: bad) == .transferSyntaxUID)
    }
}

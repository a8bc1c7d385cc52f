import DICOMData

/// The manifest entry of a zip place's archive (``ZipPlace/manifestName``): the study's patient and study
/// keys and each series' keys as DICOM JSON (PS3.18 §F.2), so a listing reads no DICOM header:
///
///     {"px-zip-place": 1, "study": {"00100020": {"vr": "LO", "Value": ["P1"]}, ...}, "series": [{...}, ...]}
///
/// Counts are not in it: the central directory has them.
struct Manifest {
    var study: DataSet
    var studyInstanceUID: String
    var series: [DataSet]

    init(study: DataSet, studyInstanceUID: String, series: [DataSet]) {
        self.study = study
        self.studyInstanceUID = studyInstanceUID
        self.series = series
    }

    /// Patient and study level keys a listing and C-FIND matching use (PS3.4 §C.6.2.1.2).
    static let studyKeys = tags(
        "SpecificCharacterSet", "StudyDate", "StudyTime", "AccessionNumber", "ReferringPhysicianName",
        "StudyDescription", "PatientName", "PatientID", "PatientBirthDate", "PatientSex", "StudyInstanceUID", "StudyID")
    /// Series level keys (PS3.4 §C.6.2.1.2).
    static let seriesKeys = tags(
        "SpecificCharacterSet", "SeriesDate", "SeriesTime", "Modality", "SeriesDescription", "BodyPartExamined",
        "SeriesInstanceUID", "SeriesNumber")

    /// The tags of dictionary keywords (all of them standard keywords the dictionary knows).
    static func tags(_ keywords: String...) -> [Tag] {
        keywords.compactMap { DataDictionary.entry(forKeyword: $0)?.tag }
    }

    static func studyRecord(of dataSet: DataSet) -> DataSet { record(of: dataSet, keys: studyKeys) }
    static func seriesRecord(of dataSet: DataSet) -> DataSet { record(of: dataSet, keys: seriesKeys) }

    private static func record(of dataSet: DataSet, keys: [Tag]) -> DataSet {
        var record = DataSet()
        for tag in keys { if let element = dataSet[tag] { record.set(element) } }
        return record
    }

    func encoded() -> [UInt8] {
        let json = JSONValue.object([
            JSONMember("px-zip-place", .integer(ZipPlace.manifestVersion)),
            JSONMember("study", study.dicomJSON()),
            JSONMember("series", .array(series.map { $0.dicomJSON() })),
        ])
        return Array(json.serialized().utf8)
    }

    init(bytes: [UInt8], path: String) throws(ZipError) {
        let json: JSONValue
        do { json = try JSONParser.parse(bytes) } catch {
            throw .malformed("\(ZipPlace.manifestName) is not JSON (\(error))", path: path)
        }
        guard case .number(let version)? = json["px-zip-place"], Int(version) == ZipPlace.manifestVersion,
            let studyJSON = json["study"], let seriesJSON = json["series"]?.arrayValue
        else { throw .malformed("\(ZipPlace.manifestName) is not a version 1 manifest", path: path) }
        do {
            self.study = try DataSet(dicomJSON: studyJSON)
            self.series = try seriesJSON.map { (value) throws(DICOMDataError) in try DataSet(dicomJSON: value) }
        } catch {
            throw .malformed("\(ZipPlace.manifestName): bad DICOM JSON (\(error))", path: path)
        }
        guard let uid = study.string(.studyInstanceUID)?.trimmingSpaces, !uid.isEmpty else {
            throw .malformed("\(ZipPlace.manifestName) has no StudyInstanceUID", path: path)
        }
        self.studyInstanceUID = uid
    }
}

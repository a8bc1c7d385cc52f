import DICOMData

extension PXOutput {
    /// One C-GET's data: the request, the final status and counts, and the stored instances sorted by
    /// path (arrival order differs between backends; the set does not).
    public static func json(_ result: GetResult) -> JSONValue {
        var members = [
            JSONMember("level", .string(result.request.level.dicomValue)),
            JSONMember("model", .string(result.request.model.rawValue)),
        ]
        // A whole patient (PS3.4 §C.6.1.1.2) is named by its PatientID; it has no StudyInstanceUID.
        members.append(
            result.request.level == .patient
                ? JSONMember("PatientID", .string(result.request.patientID ?? ""))
                : JSONMember("StudyInstanceUID", .string(result.request.studyInstanceUID)))
        if let series = result.request.seriesInstanceUID {
            members.append(JSONMember("SeriesInstanceUID", .string(series)))
        }
        if !result.request.sopInstanceUIDs.isEmpty {
            members.append(JSONMember("SOPInstanceUIDs", .array(result.request.sopInstanceUIDs.map(JSONValue.string))))
        }
        let instances = result.instances.sorted { $0.path < $1.path }.map { i -> JSONValue in
            .object([
                JSONMember("path", .string(i.path)),
                JSONMember("SOPClassUID", .string(i.sopClassUID)),
                JSONMember("SOPInstanceUID", .string(i.sopInstanceUID)),
                JSONMember("StudyInstanceUID", .string(i.studyInstanceUID)),
                JSONMember("SeriesInstanceUID", .string(i.seriesInstanceUID)),
                JSONMember("bytes", .integer(i.bytes)),
                JSONMember("transferSyntaxUID", .string(i.transferSyntaxUID)),
            ])
        }
        members += [
            JSONMember("dimseStatus", json(result.status)),
            JSONMember("remaining", result.remaining.map { .integer($0) } ?? .null),
            JSONMember("completed", .integer(result.completed)),
            JSONMember("failed", .integer(result.failed)),
            JSONMember("warning", .integer(result.warning)),
            JSONMember("responses", .integer(result.responses)),
            JSONMember("instances", .array(instances)),
            JSONMember("storeFailures", .array(result.storeFailures.map { json($0) })),
        ]
        if !result.failedSOPInstanceUIDs.isEmpty {
            // PS3.4 §C.4.3.1.3.2: the instances the peer could not send, when it names them.
            members.append(
                JSONMember("failedSOPInstanceUIDs", .array(result.failedSOPInstanceUIDs.map(JSONValue.string))))
        }
        return .object(members)
    }
}

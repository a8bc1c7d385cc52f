import DICOMData
import FuzzSupport
import PXCore

// Input: an option byte, then fields separated by 0xFF (a byte that never occurs in UTF-8):
//   option bits 0-2   the template (one of `templates`; 7 = the first field is the template itself)
//   option bits 3-6   the field length cap: 16 + 4 * n UTF-8 bytes
//   option bit 7      the next field is a Specific Character Set (0008,0005) value for the data set
//   then the raw value bytes of PatientID, PatientName, StudyDescription, StudyDate, StudyInstanceUID,
//   SeriesDescription, SeriesDate, SeriesInstanceUID, InstanceNumber, SOPInstanceUID, in that order.
//
// Invariants, for every value through `sanitise` and every component of every layout:
// - never empty, never `.` or `..`, never starting with `.`;
// - never a `/`, a NUL or another control character;
// - a sanitised field is at most the cap in UTF-8 bytes; a component at most its literal text plus
//   the cap per field;
// - the full path is `root/` + the components joined by `/`, and lies inside the root.

private let templates = [
    StorageLayout.pypxTemplate,
    "{PatientID}/{StudyInstanceUID}/{SeriesInstanceUID}/{SOPInstanceUID}.dcm",
    "{SOPInstanceUID}",
    "x{PatientName}y{PatientID}/{StudyDate}{SeriesDate}/{InstanceNumber}",
    "{StudyDescription}/{SeriesDescription}.{StudyDate}/{SOPInstanceUID}",
    "/{PatientName}/{SeriesDescription}-{InstanceNumber}.dcm",
    "{PatientID}../{SOPInstanceUID}..dcm",
]

private let fieldTags: [Tag] = [
    .patientID, .patientName, .studyDescription, .studyDate, .studyInstanceUID,
    .seriesDescription, .seriesDate, .seriesInstanceUID, .instanceNumber, .sopInstanceUID,
]

private let root = "/srv/px-root"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLayout(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let options = input.first else { return 0 }
    var fields = input.dropFirst().split(separator: 0xFF, omittingEmptySubsequences: false)[...]
    let cap = 16 + 4 * Int((options >> 3) & 0x0F)

    let layout: StorageLayout
    if options & 0x07 == 7 {
        let text = String(decoding: fields.popFirst() ?? [], as: UTF8.self)
        guard let parsed = try? StorageLayout(template: text, maximumFieldLength: cap) else { return 0 }
        layout = parsed
    } else {
        layout = try! StorageLayout(template: templates[Int(options & 0x07) % templates.count], maximumFieldLength: cap)
    }

    var elements: [DataElement] = []
    if options & 0x80 != 0 {
        elements.append(DataElement(tag: .specificCharacterSet, vr: .CS, bytes: fields.popFirst() ?? []))
    }
    for tag in fieldTags {
        guard let value = fields.popFirst() else { break }
        checkField(layout.sanitise(String(decoding: value, as: UTF8.self)), cap: cap)
        elements.append(DataElement(tag: tag, vr: DataDictionary.entry(for: tag)?.vr ?? .LO, bytes: value))
    }
    let dataSet = DataSet(elements)

    let components = layout.components(for: dataSet)
    let bound = layout.template.utf8.count + cap * 16
    for component in components {
        checkComponent(component)
        fuzzCheck(component.utf8.count <= bound, "component of \(component.utf8.count) bytes (bound \(bound))")
    }
    let path: String
    do {
        path = try layout.path(for: dataSet, root: root)
    } catch {
        fuzzCheck(false, "no path for components \(components): \(error)")
        return 0
    }
    fuzzCheck(path == ([root] + components).joined(separator: "/"), "path \(path) is not root + components")
    fuzzCheck(StorageLayout.isInside(path, root: root), "path \(path) outside \(root)")
    return 0
}

private func checkField(_ text: String, cap: Int) {
    checkComponent(text)
    fuzzCheck(text.utf8.count <= cap, "sanitised field of \(text.utf8.count) bytes above the cap \(cap): \(text)")
}

private func checkComponent(_ text: String) {
    let utf8 = Array(text.utf8)
    fuzzCheck(!utf8.isEmpty, "empty path component")
    fuzzCheck(utf8.first != UInt8(ascii: "."), "path component starting with '.': \(debug(text))")
    fuzzCheck(!utf8.contains(UInt8(ascii: "/")), "path component with '/': \(debug(text))")
    fuzzCheck(!utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }), "path component with a control byte: \(debug(text))")
}

private func debug(_ text: String) -> String {
    text.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined()
}

import DICOMData
import FuzzSupport
import PXStorage

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
// - one component per component of the template (the path stays inside the root: placement opens them
//   one by one from the root).

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
        // A cap that could make a name longer than a file system allows is refused up front.
        guard
            let builtIn = try? StorageLayout(
                template: templates[Int(options & 0x07) % templates.count], maximumFieldLength: cap)
        else { return 0 }
        layout = builtIn
    }

    var elements: [DataElement] = []
    if options & 0x80 != 0 {
        elements.append(DataElement(tag: .specificCharacterSet, vr: .CS, bytes: fields.popFirst() ?? []))
    }
    for tag in fieldTags {
        guard let value = fields.popFirst() else { break }
        checkField(layout.sanitise(String(decoding: value, as: UTF8.self)), cap: layout.maximumFieldLength)
        elements.append(DataElement(tag: tag, vr: DataDictionary.entry(for: tag)?.vr ?? .LO, bytes: value))
    }
    let dataSet = DataSet(elements)

    let components = layout.components(for: dataSet)
    let bound = layout.template.utf8.count + layout.maximumFieldLength * 16
    for component in components {
        checkComponent(component)
        fuzzCheck(component.utf8.count <= bound, "component of \(component.utf8.count) bytes (bound \(bound))")
    }
    fuzzCheck(
        components.count == layout.template.unicodeScalars.split(separator: "/").count,
        "components \(components) for \(layout.template)")
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
    text.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 ? String($0) : "\\u{\(String($0.value, radix: 16))}" }
        .joined()
}

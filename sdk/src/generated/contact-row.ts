/* eslint-disable */
// @ts-nocheck: ajv's standalone code is untyped JavaScript; sdk/src/cli/import/validate.ts, its one importer, types it.
/**
 * ajv's standalone validator of ContactUpsertInput from the /v1 OpenAPI document, for the dry run of `leadwire import`,
 * so that the command line checks rows by the schema the server publishes and ships no schema compiler. Do not edit:
 * run `npm run sdk:generate` after changing the /v1 contract.
 */
/** The schema's fields in its order, which is the order the server reports issues in. */
export const CONTACT_FIELDS = ["email","firstName","lastName","phone","title","companyDomain","tags","custom","source"];

export const validate = validate20;
export default validate20;
const schema31 = {"type":"object","properties":{"email":{"anyOf":[{"description":"Matched lowercased and trimmed. An existing email is never replaced.","example":"ada@example.com","type":"string","maxLength":320},{"type":"null"}]},"firstName":{"anyOf":[{"type":"string","maxLength":200},{"type":"null"}]},"lastName":{"anyOf":[{"type":"string","maxLength":200},{"type":"null"}]},"phone":{"anyOf":[{"type":"string","maxLength":50},{"type":"null"}]},"title":{"description":"Job title; returned as `jobTitle` by search.","anyOf":[{"type":"string","maxLength":200},{"type":"null"}]},"companyDomain":{"description":"Links the contact to an existing company by domain (normalised to the bare host). Never creates a company.","example":"example.com","anyOf":[{"type":"string","maxLength":2048},{"type":"null"}]},"tags":{"maxItems":100,"type":"array","items":{"type":"string","minLength":1,"maxLength":100},"description":"Tags to add. Tags are only added, never removed by an upsert.","example":["vip","newsletter"]},"custom":{"description":"Free-form key/value data, merged key by key into what is stored; a key sent as null is removed. At most 200 keys of 1-100 characters, string values up to 10,000 characters, 8 levels deep; no NUL, unpaired surrogate or `__proto__` key anywhere.","example":{"plan":"trial"},"type":"object","propertyNames":{"type":"string","minLength":1,"maxLength":100},"additionalProperties":{}},"source":{"type":"string","pattern":"^[A-Za-z0-9._-]{1,40}$","description":"Origin of the record. Applied to new contacts only; default `api`.","example":"webinar-2026"}},"description":"Identify the contact by email, or by companyDomain together with firstName and lastName. Fields sent overwrite stored values; fields omitted are left alone; null clears a field."};
const func1 = function ucs2length(str) {
    const len = str.length;
    let length = 0;
    let pos = 0;
    let value;
    while (pos < len) {
        length++;
        value = str.charCodeAt(pos++);
        if (value >= 0xd800 && value <= 0xdbff && pos < len) {
            // high surrogate, and there is a next character
            value = str.charCodeAt(pos);
            if ((value & 0xfc00) === 0xdc00)
                pos++; // low surrogate
        }
    }
    return length;
};
const pattern4 = new RegExp("^[A-Za-z0-9._-]{1,40}$", "u");

function validate20(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate20.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.email !== undefined){
let data0 = data.email;
const _errs2 = errors;
let valid1 = false;
const _errs3 = errors;
if(typeof data0 === "string"){
if(func1(data0) > 320){
const err0 = {instancePath:instancePath+"/email",schemaPath:"#/properties/email/anyOf/0/maxLength",keyword:"maxLength",params:{limit: 320},message:"must NOT have more than 320 characters"};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
}
else {
const err1 = {instancePath:instancePath+"/email",schemaPath:"#/properties/email/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
var _valid0 = _errs3 === errors;
valid1 = valid1 || _valid0;
const _errs5 = errors;
if(data0 !== null){
const err2 = {instancePath:instancePath+"/email",schemaPath:"#/properties/email/anyOf/1/type",keyword:"type",params:{type: "null"},message:"must be null"};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
var _valid0 = _errs5 === errors;
valid1 = valid1 || _valid0;
if(!valid1){
const err3 = {instancePath:instancePath+"/email",schemaPath:"#/properties/email/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
else {
errors = _errs2;
if(vErrors !== null){
if(_errs2){
vErrors.length = _errs2;
}
else {
vErrors = null;
}
}
}
}
if(data.firstName !== undefined){
let data1 = data.firstName;
const _errs8 = errors;
let valid2 = false;
const _errs9 = errors;
if(typeof data1 === "string"){
if(func1(data1) > 200){
const err4 = {instancePath:instancePath+"/firstName",schemaPath:"#/properties/firstName/anyOf/0/maxLength",keyword:"maxLength",params:{limit: 200},message:"must NOT have more than 200 characters"};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
else {
const err5 = {instancePath:instancePath+"/firstName",schemaPath:"#/properties/firstName/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
var _valid1 = _errs9 === errors;
valid2 = valid2 || _valid1;
const _errs11 = errors;
if(data1 !== null){
const err6 = {instancePath:instancePath+"/firstName",schemaPath:"#/properties/firstName/anyOf/1/type",keyword:"type",params:{type: "null"},message:"must be null"};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
var _valid1 = _errs11 === errors;
valid2 = valid2 || _valid1;
if(!valid2){
const err7 = {instancePath:instancePath+"/firstName",schemaPath:"#/properties/firstName/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
else {
errors = _errs8;
if(vErrors !== null){
if(_errs8){
vErrors.length = _errs8;
}
else {
vErrors = null;
}
}
}
}
if(data.lastName !== undefined){
let data2 = data.lastName;
const _errs14 = errors;
let valid3 = false;
const _errs15 = errors;
if(typeof data2 === "string"){
if(func1(data2) > 200){
const err8 = {instancePath:instancePath+"/lastName",schemaPath:"#/properties/lastName/anyOf/0/maxLength",keyword:"maxLength",params:{limit: 200},message:"must NOT have more than 200 characters"};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
else {
const err9 = {instancePath:instancePath+"/lastName",schemaPath:"#/properties/lastName/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
var _valid2 = _errs15 === errors;
valid3 = valid3 || _valid2;
const _errs17 = errors;
if(data2 !== null){
const err10 = {instancePath:instancePath+"/lastName",schemaPath:"#/properties/lastName/anyOf/1/type",keyword:"type",params:{type: "null"},message:"must be null"};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
var _valid2 = _errs17 === errors;
valid3 = valid3 || _valid2;
if(!valid3){
const err11 = {instancePath:instancePath+"/lastName",schemaPath:"#/properties/lastName/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
else {
errors = _errs14;
if(vErrors !== null){
if(_errs14){
vErrors.length = _errs14;
}
else {
vErrors = null;
}
}
}
}
if(data.phone !== undefined){
let data3 = data.phone;
const _errs20 = errors;
let valid4 = false;
const _errs21 = errors;
if(typeof data3 === "string"){
if(func1(data3) > 50){
const err12 = {instancePath:instancePath+"/phone",schemaPath:"#/properties/phone/anyOf/0/maxLength",keyword:"maxLength",params:{limit: 50},message:"must NOT have more than 50 characters"};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
}
else {
const err13 = {instancePath:instancePath+"/phone",schemaPath:"#/properties/phone/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
var _valid3 = _errs21 === errors;
valid4 = valid4 || _valid3;
const _errs23 = errors;
if(data3 !== null){
const err14 = {instancePath:instancePath+"/phone",schemaPath:"#/properties/phone/anyOf/1/type",keyword:"type",params:{type: "null"},message:"must be null"};
if(vErrors === null){
vErrors = [err14];
}
else {
vErrors.push(err14);
}
errors++;
}
var _valid3 = _errs23 === errors;
valid4 = valid4 || _valid3;
if(!valid4){
const err15 = {instancePath:instancePath+"/phone",schemaPath:"#/properties/phone/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err15];
}
else {
vErrors.push(err15);
}
errors++;
}
else {
errors = _errs20;
if(vErrors !== null){
if(_errs20){
vErrors.length = _errs20;
}
else {
vErrors = null;
}
}
}
}
if(data.title !== undefined){
let data4 = data.title;
const _errs26 = errors;
let valid5 = false;
const _errs27 = errors;
if(typeof data4 === "string"){
if(func1(data4) > 200){
const err16 = {instancePath:instancePath+"/title",schemaPath:"#/properties/title/anyOf/0/maxLength",keyword:"maxLength",params:{limit: 200},message:"must NOT have more than 200 characters"};
if(vErrors === null){
vErrors = [err16];
}
else {
vErrors.push(err16);
}
errors++;
}
}
else {
const err17 = {instancePath:instancePath+"/title",schemaPath:"#/properties/title/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err17];
}
else {
vErrors.push(err17);
}
errors++;
}
var _valid4 = _errs27 === errors;
valid5 = valid5 || _valid4;
const _errs29 = errors;
if(data4 !== null){
const err18 = {instancePath:instancePath+"/title",schemaPath:"#/properties/title/anyOf/1/type",keyword:"type",params:{type: "null"},message:"must be null"};
if(vErrors === null){
vErrors = [err18];
}
else {
vErrors.push(err18);
}
errors++;
}
var _valid4 = _errs29 === errors;
valid5 = valid5 || _valid4;
if(!valid5){
const err19 = {instancePath:instancePath+"/title",schemaPath:"#/properties/title/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err19];
}
else {
vErrors.push(err19);
}
errors++;
}
else {
errors = _errs26;
if(vErrors !== null){
if(_errs26){
vErrors.length = _errs26;
}
else {
vErrors = null;
}
}
}
}
if(data.companyDomain !== undefined){
let data5 = data.companyDomain;
const _errs32 = errors;
let valid6 = false;
const _errs33 = errors;
if(typeof data5 === "string"){
if(func1(data5) > 2048){
const err20 = {instancePath:instancePath+"/companyDomain",schemaPath:"#/properties/companyDomain/anyOf/0/maxLength",keyword:"maxLength",params:{limit: 2048},message:"must NOT have more than 2048 characters"};
if(vErrors === null){
vErrors = [err20];
}
else {
vErrors.push(err20);
}
errors++;
}
}
else {
const err21 = {instancePath:instancePath+"/companyDomain",schemaPath:"#/properties/companyDomain/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err21];
}
else {
vErrors.push(err21);
}
errors++;
}
var _valid5 = _errs33 === errors;
valid6 = valid6 || _valid5;
const _errs35 = errors;
if(data5 !== null){
const err22 = {instancePath:instancePath+"/companyDomain",schemaPath:"#/properties/companyDomain/anyOf/1/type",keyword:"type",params:{type: "null"},message:"must be null"};
if(vErrors === null){
vErrors = [err22];
}
else {
vErrors.push(err22);
}
errors++;
}
var _valid5 = _errs35 === errors;
valid6 = valid6 || _valid5;
if(!valid6){
const err23 = {instancePath:instancePath+"/companyDomain",schemaPath:"#/properties/companyDomain/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err23];
}
else {
vErrors.push(err23);
}
errors++;
}
else {
errors = _errs32;
if(vErrors !== null){
if(_errs32){
vErrors.length = _errs32;
}
else {
vErrors = null;
}
}
}
}
if(data.tags !== undefined){
let data6 = data.tags;
if(Array.isArray(data6)){
if(data6.length > 100){
const err24 = {instancePath:instancePath+"/tags",schemaPath:"#/properties/tags/maxItems",keyword:"maxItems",params:{limit: 100},message:"must NOT have more than 100 items"};
if(vErrors === null){
vErrors = [err24];
}
else {
vErrors.push(err24);
}
errors++;
}
const len0 = data6.length;
for(let i0=0; i0<len0; i0++){
let data7 = data6[i0];
if(typeof data7 === "string"){
if(func1(data7) > 100){
const err25 = {instancePath:instancePath+"/tags/" + i0,schemaPath:"#/properties/tags/items/maxLength",keyword:"maxLength",params:{limit: 100},message:"must NOT have more than 100 characters"};
if(vErrors === null){
vErrors = [err25];
}
else {
vErrors.push(err25);
}
errors++;
}
if(func1(data7) < 1){
const err26 = {instancePath:instancePath+"/tags/" + i0,schemaPath:"#/properties/tags/items/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"};
if(vErrors === null){
vErrors = [err26];
}
else {
vErrors.push(err26);
}
errors++;
}
}
else {
const err27 = {instancePath:instancePath+"/tags/" + i0,schemaPath:"#/properties/tags/items/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err27];
}
else {
vErrors.push(err27);
}
errors++;
}
}
}
else {
const err28 = {instancePath:instancePath+"/tags",schemaPath:"#/properties/tags/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err28];
}
else {
vErrors.push(err28);
}
errors++;
}
}
if(data.custom !== undefined){
let data8 = data.custom;
if(data8 && typeof data8 == "object" && !Array.isArray(data8)){
for(const key0 in data8){
const _errs43 = errors;
if(typeof key0 === "string"){
if(func1(key0) > 100){
const err29 = {instancePath:instancePath+"/custom",schemaPath:"#/properties/custom/propertyNames/maxLength",keyword:"maxLength",params:{limit: 100},message:"must NOT have more than 100 characters",propertyName:key0};
if(vErrors === null){
vErrors = [err29];
}
else {
vErrors.push(err29);
}
errors++;
}
if(func1(key0) < 1){
const err30 = {instancePath:instancePath+"/custom",schemaPath:"#/properties/custom/propertyNames/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",propertyName:key0};
if(vErrors === null){
vErrors = [err30];
}
else {
vErrors.push(err30);
}
errors++;
}
}
else {
const err31 = {instancePath:instancePath+"/custom",schemaPath:"#/properties/custom/propertyNames/type",keyword:"type",params:{type: "string"},message:"must be string",propertyName:key0};
if(vErrors === null){
vErrors = [err31];
}
else {
vErrors.push(err31);
}
errors++;
}
var valid9 = _errs43 === errors;
if(!valid9){
const err32 = {instancePath:instancePath+"/custom",schemaPath:"#/properties/custom/propertyNames",keyword:"propertyNames",params:{propertyName: key0},message:"property name must be valid"};
if(vErrors === null){
vErrors = [err32];
}
else {
vErrors.push(err32);
}
errors++;
}
}
}
else {
const err33 = {instancePath:instancePath+"/custom",schemaPath:"#/properties/custom/type",keyword:"type",params:{type: "object"},message:"must be object"};
if(vErrors === null){
vErrors = [err33];
}
else {
vErrors.push(err33);
}
errors++;
}
}
if(data.source !== undefined){
let data9 = data.source;
if(typeof data9 === "string"){
if(!pattern4.test(data9)){
const err34 = {instancePath:instancePath+"/source",schemaPath:"#/properties/source/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z0-9._-]{1,40}$"},message:"must match pattern \""+"^[A-Za-z0-9._-]{1,40}$"+"\""};
if(vErrors === null){
vErrors = [err34];
}
else {
vErrors.push(err34);
}
errors++;
}
}
else {
const err35 = {instancePath:instancePath+"/source",schemaPath:"#/properties/source/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err35];
}
else {
vErrors.push(err35);
}
errors++;
}
}
}
else {
const err36 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object"};
if(vErrors === null){
vErrors = [err36];
}
else {
vErrors.push(err36);
}
errors++;
}
validate20.errors = vErrors;
return errors === 0;
}
validate20.evaluated = {"props":{"email":true,"firstName":true,"lastName":true,"phone":true,"title":true,"companyDomain":true,"tags":true,"custom":true,"source":true},"dynamicProps":false,"dynamicItems":false};
